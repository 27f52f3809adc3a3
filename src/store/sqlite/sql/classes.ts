import { prepareAll, type SqliteDb } from '../connection.js';

/** Pause and resume (class_controls), and the starts of rate-limited classes (class_starts). */
export const CLASS_SQL = {
  /** (class, now, actor) -> the class, now paused; no row: it was paused already. */
  pause: `INSERT INTO class_controls (class, paused_at, paused_by) VALUES (@class, @now, @actor)
    ON CONFLICT (class) DO UPDATE SET paused_at = excluded.paused_at, paused_by = excluded.paused_by WHERE class_controls.paused_at IS NULL
    RETURNING class`,
  /** (class, now, actor) no row changed: it was not paused. */
  resume: `UPDATE class_controls SET paused_at = NULL, resumed_at = @now, resumed_by = @actor WHERE class = @class AND paused_at IS NOT NULL`,
  /** () -> every control row, by name (one per class ever paused or rate-limited). */
  list: `SELECT class, paused_at, paused_by, resumed_at, resumed_by FROM class_controls ORDER BY class`,
  /** (class, since) -> starts granted after `since`, through class_starts_window. */
  startsSince: `SELECT count(*) AS count FROM class_starts WHERE class = @class AND claimed_at > @since`,
  /** (class, since, offset) -> the time of the start at that place after `since`, oldest first; no row: fewer. */
  startAt: `SELECT claimed_at FROM class_starts WHERE class = @class AND claimed_at > @since ORDER BY claimed_at LIMIT 1 OFFSET @offset`,
  /** (class, now, count) records `count` starts granted now. */
  startsAdd: `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @count)
    INSERT INTO class_starts (class, claimed_at) SELECT @class, @now FROM n`,
  /** (class, before, limit) deletes up to `limit` starts stamped at or before `before`. */
  startsPrune: `DELETE FROM class_starts WHERE id IN (SELECT id FROM class_starts WHERE class = @class AND claimed_at <= @before LIMIT @limit)`,
  /** (class, now) -> due: 1 when a queued job of the class may run now, through jobs_claim. */
  due: `SELECT EXISTS (SELECT 1 FROM jobs WHERE status = 'QUEUED' AND class = @class AND run_at <= @now) AS due`,
};

export const prepareClassStatements = (db: SqliteDb) => prepareAll(db, CLASS_SQL);

export type ClassStatements = ReturnType<typeof prepareClassStatements>;
