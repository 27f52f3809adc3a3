import { prepareAll, type SqliteDb } from '../connection.js';

/** Statements on the two history tables: attempts (one row per claim) and events (the timeline). */
export const HISTORY_SQL = {
  /** (jobId, attempt, ownerId, leaseToken, now) written by the claim. */
  attemptInsert: `INSERT INTO job_attempts (job_id, attempt, owner_id, lease_token, started_at, status)
    VALUES (@jobId, @attempt, @ownerId, @leaseToken, @now, 'RUNNING')`,
  /** (jobId, attempt, leaseToken, status, code, detail, now) ends the attempt; no row: not that claim's attempt. */
  attemptFinish: `UPDATE job_attempts SET status = @status, finished_at = @now, error_code = @code, error_detail = @detail
    WHERE job_id = @jobId AND attempt = @attempt AND lease_token = @leaseToken AND status = 'RUNNING'`,
  /** (jobId) oldest first. */
  attemptList: `SELECT job_id, attempt, owner_id, lease_token, started_at, finished_at, status, error_code, error_detail
    FROM job_attempts WHERE job_id = ? ORDER BY attempt`,
  /** (jobId, ts, event, actor, detail) appends to the timeline. */
  eventInsert: `INSERT INTO job_events (job_id, ts, event, actor, detail) VALUES (@jobId, @now, @event, @actor, @detail)`,
  /** (jobId) oldest first. */
  eventList: `SELECT id, job_id, ts, event, actor, detail FROM job_events WHERE job_id = ? ORDER BY id`,
};

export const prepareHistoryStatements = (db: SqliteDb) => prepareAll(db, HISTORY_SQL);

export type HistoryStatements = ReturnType<typeof prepareHistoryStatements>;
