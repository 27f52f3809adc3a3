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
  /** (class, before, limit) deletes up to `limit` starts stamped at or before `before` (on every rate-limited claim: `+@limit`, as the claim's). */
  startsPrune: `DELETE FROM class_starts WHERE id IN (SELECT id FROM class_starts WHERE class = @class AND claimed_at <= @before LIMIT +@limit)`,
  /** (supervisorId, class, reason, now) the supervisor has disabled the class (replacing its earlier record of it). */
  disable: `INSERT INTO disabled_classes (supervisor_id, class, reason, disabled_at) VALUES (@supervisorId, @class, @reason, @now)
    ON CONFLICT (supervisor_id, class) DO UPDATE SET reason = excluded.reason, disabled_at = excluded.disabled_at`,
  /** (supervisorId, class) the class is enabled again; no row changed: it was not disabled there. */
  enable: `DELETE FROM disabled_classes WHERE supervisor_id = @supervisorId AND class = @class`,
  /** (supervisorId) every class of the supervisor (it exits), by the primary key's prefix. */
  enableAll: `DELETE FROM disabled_classes WHERE supervisor_id = @supervisorId`,
  /**
   * (liveSince) -> the classes disabled by supervisors alive (not exited, heartbeat since liveSince), by class.
   * The table holds a row per class per supervisor that disabled it, so it is read whole; each supervisor by key.
   */
  disabledList: `SELECT d.class, d.supervisor_id, s.host, d.reason, d.disabled_at
    FROM disabled_classes AS d JOIN workers AS s ON s.id = d.supervisor_id
    WHERE s.exited_at IS NULL AND s.heartbeat_at >= @liveSince ORDER BY d.class, d.supervisor_id`,
  /** (class, now) -> due: 1 when a queued job of the class may run now, through jobs_claim. */
  due: `SELECT EXISTS (SELECT 1 FROM jobs WHERE status = 'QUEUED' AND class = @class AND run_at <= @now) AS due`,
};

export const prepareClassStatements = (db: SqliteDb) => prepareAll(db, CLASS_SQL);

export type ClassStatements = ReturnType<typeof prepareClassStatements>;
