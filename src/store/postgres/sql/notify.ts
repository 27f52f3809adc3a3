import { nameAll } from '../connection.js';

/**
 * The channel idle workers listen on. Channels are server-wide, so the
 * payload is `<schema>:<class>` of the job enqueued: queues in other schemas
 * of the same database do not wake each other's workers.
 */
export const JOBS_CHANNEL = 'leasehold_jobs';

/**
 * The channel readers of outcomes listen on (Queue.waitFor, Queue.events):
 * one notification per transaction that ends jobs (leasehold_after_outcomes),
 * its payload the queue's schema (`current_schema()`).
 */
export const OUTCOMES_CHANNEL = 'leasehold_outcomes';

/** Wake-ups. LISTEN takes no parameters: the channel is a constant, never a value. */
export const NOTIFY_SQL = nameAll('notify', {
  /** (classes[]) one notification per class, sent when the transaction commits (none if it rolls back). */
  jobsAvailable: `SELECT pg_notify('${JOBS_CHANNEL}', current_schema() || ':' || c) FROM unnest($1::text[]) AS c`,
  /** () the schema this session's queue lives in (its search_path's first): the payloads' prefix to listen for. */
  queueSchema: 'SELECT current_schema() AS schema',
  /** () on a dedicated client; ending the session stops it. */
  listen: `LISTEN ${JOBS_CHANNEL}`,
  /** () on a dedicated client, for the outcomes' wake-ups; ending the session stops it. */
  listenOutcomes: `LISTEN ${OUTCOMES_CHANNEL}`,
});
