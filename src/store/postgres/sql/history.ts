import { nameAll } from '../connection.js';

const EVENTS_IN = `unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS e(job_id, ts, event, actor, detail, n)`;

/** Statements on the two history tables: attempts (one row per claim) and events (the timeline). */
export const HISTORY_SQL = nameAll('history', {
  /** (jobIds[], leaseTokens[]) -> those claims' attempts and their jobs' state now (EndedAttempt); a pair that names no claim: no row. */
  attemptsByToken: `SELECT a.job_id, a.lease_token, a.attempt, a.status, a.error_code, a.error_detail,
      j.status AS job_status, j.attempts AS job_attempts, j.run_at, j.result
    FROM unnest($1::bigint[], $2::text[]) AS t(job_id, lease_token)
    JOIN job_attempts a ON a.job_id = t.job_id AND a.lease_token = t.lease_token JOIN jobs j ON j.id = a.job_id`,
  /** (jobId) oldest first. */
  attemptList: `SELECT job_id, attempt, owner_id, lease_token, started_at, finished_at, status, error_code, error_detail,
      error_stack, cpu_ms, peak_rss_bytes
    FROM job_attempts WHERE job_id = $1 ORDER BY attempt`,
  /** (jobIds[], ts[], events[], actors[], details[]) appends to the timeline in array order. */
  eventInsertMany: `INSERT INTO job_events (job_id, ts, event, actor, detail)
    SELECT e.job_id, e.ts, e.event, e.actor, e.detail FROM ${EVENTS_IN} ORDER BY e.n`,
  /**
   * (the same arrays) for jobs that may not exist (zombie writes): an event whose job is gone, or is being
   * deleted, is dropped instead of failing the transaction on the foreign key.
   */
  eventInsertIfJob: `INSERT INTO job_events (job_id, ts, event, actor, detail)
    SELECT e.job_id, e.ts, e.event, e.actor, e.detail FROM ${EVENTS_IN} JOIN jobs ON jobs.id = e.job_id
    ORDER BY e.n FOR KEY SHARE OF jobs`,
  /** (jobId) oldest first. */
  eventList: `SELECT id, job_id, ts, event, actor, detail FROM job_events WHERE job_id = $1 ORDER BY id`,
  /** (jobId) its attempts' own log lines, in order, through the primary key. */
  logList: `SELECT job_id, attempt, seq, ts, level, message, fields FROM job_logs WHERE job_id = $1 ORDER BY attempt, seq`,
  /** (jobIds[], attempts[], seqs[], ts[], levels[], messages[], fields[]) attempts' own log lines, written with their outcomes. */
  logInsertMany: `INSERT INTO job_logs (job_id, attempt, seq, ts, level, message, fields)
    SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[], $4::bigint[], $5::text[], $6::text[], $7::text[])`,
});
