import { nameAll } from '../connection.js';

const SCHEDULE_COLUMNS = 'class, name, checked_through, last_run_at, last_job_id, updated_at, updated_by';

/**
 * Statements on `schedules` (its primary key is (class, name)). Under READ
 * COMMITTED a second `advance` of the same row waits for the first to
 * commit, then re-checks its WHERE against the new row: it changes nothing.
 */
export const SCHEDULE_SQL = nameAll('schedules', {
  /** () every schedule's row. */
  list: `SELECT ${SCHEDULE_COLUMNS} FROM schedules ORDER BY class, name`,
  /** (class, name, through, now, actor) a schedule's first row; no row changed: another process wrote it first. */
  start: `INSERT INTO schedules (class, name, checked_through, updated_at, updated_by)
    VALUES ($1, $2, $3, $4, $5) ON CONFLICT (class, name) DO NOTHING`,
  /** (class, name, expected, through, now, actor) compare-and-set; no row changed: another process moved it first. */
  advance: `UPDATE schedules SET checked_through = $4, updated_at = $5, updated_by = $6
    WHERE class = $1 AND name = $2 AND checked_through = $3`,
  /** (class, name, runAt, jobId) the occurrence just enqueued is the last run. */
  recordRun: `UPDATE schedules SET last_run_at = $3, last_job_id = $4 WHERE class = $1 AND name = $2`,
});
