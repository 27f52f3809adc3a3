import { prepareAll, type SqliteDb } from '../connection.js';
import type { MultiRowInsert } from '../multi-row.js';

/** Statements on the two history tables: attempts (one row per claim) and events (the timeline). */
export const HISTORY_SQL = {
  /**
   * (status, now, code, detail, stack, cpuMs, peakRssBytes, jobId, attempt, leaseToken), in that order, ends the
   * attempt with its cost; no row: not that claim's attempt. Bound by position: a bind by name looks up each
   * parameter on an object, a third of the statement's time on the writer's path (docs/performance.md).
   */
  attemptFinish: `UPDATE job_attempts SET status = ?, finished_at = ?, error_code = ?, error_detail = ?,
      error_stack = ?, cpu_ms = ?, peak_rss_bytes = ?
    WHERE job_id = ? AND attempt = ? AND lease_token = ? AND status = 'RUNNING'`,
  /** (jobId, leaseToken) -> that claim's attempt and its job's state now (EndedAttempt); no row: not a claim of this job. */
  attemptByToken: `SELECT a.job_id, a.lease_token, a.attempt, a.status, a.error_code, a.error_detail,
      j.status AS job_status, j.attempts AS job_attempts, j.run_at, j.result
    FROM job_attempts a JOIN jobs j ON j.id = a.job_id WHERE a.job_id = @jobId AND a.lease_token = @leaseToken`,
  /** (jobId) oldest first. */
  attemptList: `SELECT job_id, attempt, owner_id, lease_token, started_at, finished_at, status, error_code, error_detail,
      error_stack, cpu_ms, peak_rss_bytes
    FROM job_attempts WHERE job_id = ? ORDER BY attempt`,
  /** (jobId) oldest first. */
  eventList: `SELECT id, job_id, ts, event, actor, detail FROM job_events WHERE job_id = ? ORDER BY id`,
  /** (jobId) its attempts' own log lines, in order, through the primary key. */
  logList: `SELECT job_id, attempt, seq, ts, level, message, fields FROM job_logs WHERE job_id = ? ORDER BY attempt, seq`,
};

export const prepareHistoryStatements = (db: SqliteDb) => prepareAll(db, HISTORY_SQL);

export type HistoryStatements = ReturnType<typeof prepareHistoryStatements>;

/** The multi-row inserts of a transaction's history rows (MultiRowInserter), in the order they were planned. */
export const HISTORY_INSERTS = {
  /** (jobId, attempt, ownerId, leaseToken, now) per row: the claim's attempt rows. */
  attempts: {
    head: `INSERT INTO job_attempts (job_id, attempt, owner_id, lease_token, started_at, status) VALUES`,
    row: `(?, ?, ?, ?, ?, 'RUNNING')`,
  },
  /** (jobId, ts, event, actor, detail) per row: appends to the timeline. */
  events: { head: `INSERT INTO job_events (job_id, ts, event, actor, detail) VALUES`, row: `(?, ?, ?, ?, ?)` },
  /** (jobId, attempt, seq, ts, level, message, fields) per row: an attempt's own log lines, written with its outcome. */
  logs: {
    head: `INSERT INTO job_logs (job_id, attempt, seq, ts, level, message, fields) VALUES`,
    row: `(?, ?, ?, ?, ?, ?, ?)`,
  },
} satisfies Record<string, MultiRowInsert>;
