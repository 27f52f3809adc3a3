import { prepareAll, type SqliteDb } from '../connection.js';

const SCHEDULE_COLUMNS = 'class, name, checked_through, last_run_at, last_job_id, updated_at, updated_by';

/** Statements on `schedules` (its primary key is (class, name)). */
export const SCHEDULE_SQL = {
  /** () every schedule's row. */
  list: `SELECT ${SCHEDULE_COLUMNS} FROM schedules ORDER BY class, name`,
  /** (class, name, through, now, actor) a schedule's first row; no row changed: another process wrote it first. */
  start: `INSERT INTO schedules (class, name, checked_through, updated_at, updated_by)
    VALUES (@class, @name, @through, @now, @actor) ON CONFLICT (class, name) DO NOTHING`,
  /** (class, name, expected, through, now, actor) compare-and-set; no row changed: another process moved it first. */
  advance: `UPDATE schedules SET checked_through = @through, updated_at = @now, updated_by = @actor
    WHERE class = @class AND name = @name AND checked_through = @expected`,
  /** (class, name, runAt, jobId) the occurrence just enqueued is the last run. */
  recordRun: `UPDATE schedules SET last_run_at = @runAt, last_job_id = @jobId WHERE class = @class AND name = @name`,
};

export const prepareScheduleStatements = (db: SqliteDb) => prepareAll(db, SCHEDULE_SQL);

export type ScheduleStatements = ReturnType<typeof prepareScheduleStatements>;
