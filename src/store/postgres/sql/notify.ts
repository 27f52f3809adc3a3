import { nameAll } from '../connection.js';

/**
 * The channel idle workers listen on. Channels are server-wide, so the
 * payload is `<schema>:<class>` of the job enqueued: queues in other schemas
 * of the same database do not wake each other's workers.
 */
export const JOBS_CHANNEL = 'leasehold_jobs';

/** The channel waiters for outcomes listen on: one notification per transaction that ends jobs, its payload the schema. */
export const OUTCOMES_CHANNEL = 'leasehold_outcomes';

/** Wake-ups. LISTEN takes no parameters: the channel is this constant, never a value. */
export const NOTIFY_SQL = nameAll('notify', {
  /** (classes[]) one notification per class, sent when the transaction commits (none if it rolls back). */
  jobsAvailable: `SELECT pg_notify('${JOBS_CHANNEL}', current_schema() || ':' || c) FROM unnest($1::text[]) AS c`,
  /** () the schema this session's queue lives in (its search_path's first): the payloads' prefix to listen for. */
  queueSchema: 'SELECT current_schema() AS schema',
  /** () on a dedicated client; ending the session stops it. */
  listen: `LISTEN ${JOBS_CHANNEL}`,
});
