import { nameAll } from '../connection.js';

/**
 * The channel idle workers listen on. Channels are server-wide, so the
 * payload is `<schema>:<class>` of the job enqueued: queues in other schemas
 * of the same database do not wake each other's workers.
 */
export const JOBS_CHANNEL = 'leasehold_jobs';

/**
 * The channel readers of outcomes listen on (Queue.waitFor, Queue.events):
 * one notification per transaction that ends jobs (leasehold_after_outcomes)
 * while a reader listens, its payload the queue's schema (`current_schema()`).
 */
export const OUTCOMES_CHANNEL = 'leasehold_outcomes';

/**
 * The advisory locks that tell a transaction ending jobs whether a reader of
 * outcomes listens (pg_advisory_lock(int, int) keys, the second negative:
 * never a parent's, PARENT_LOCK). A reader holds READERS shared for as long
 * as it listens. An end takes ENDS shared until it commits, then tries
 * READERS exclusively for an instant: taken, nobody listens and it sends
 * nothing. A reader that starts meanwhile takes ENDS exclusively, so it waits
 * for every end that may not have seen it before its first look.
 */
export const OUTCOME_READERS_LOCK = 'hashtext(current_schema()), -1';
export const OUTCOME_ENDS_LOCK = 'hashtext(current_schema()), -2';

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
  /** () on that client, before it listens: a reader from now on, until the session ends. */
  outcomesReader: `SELECT pg_advisory_lock_shared(${OUTCOME_READERS_LOCK})`,
  /** () then: waits for the transactions ending jobs that may have looked before it was a reader. */
  endsBeforeReader: `SELECT pg_advisory_lock(${OUTCOME_ENDS_LOCK}); SELECT pg_advisory_unlock(${OUTCOME_ENDS_LOCK})`,
});
