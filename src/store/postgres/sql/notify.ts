import { nameAll } from '../connection.js';

/** The channel idle workers listen on; the payload is the class of the job enqueued. */
export const JOBS_CHANNEL = 'leasehold_jobs';

/** Wake-ups. LISTEN takes no parameters: the channel is this constant, never a value. */
export const NOTIFY_SQL = nameAll('notify', {
  /** (classes[]) one notification per class, sent when the transaction commits (none if it rolls back). */
  jobsAvailable: `SELECT pg_notify('${JOBS_CHANNEL}', c) FROM unnest($1::text[]) AS c`,
  /** () on a dedicated client; ending the session stops it. */
  listen: `LISTEN ${JOBS_CHANNEL}`,
});
