import { nameAll } from '../connection.js';

/** Pause and resume (class_controls), and the starts of rate-limited classes (class_starts). */
export const CLASS_SQL = nameAll('classes', {
  /** (class, now, actor) -> the class, now paused; no row: it was paused already. */
  pause: `INSERT INTO class_controls AS c (class, paused_at, paused_by) VALUES ($1, $2, $3)
    ON CONFLICT (class) DO UPDATE SET paused_at = excluded.paused_at, paused_by = excluded.paused_by WHERE c.paused_at IS NULL
    RETURNING class`,
  /** (class, now, actor) no row changed: it was not paused. */
  resume: `UPDATE class_controls SET paused_at = NULL, resumed_at = $2, resumed_by = $3 WHERE class = $1 AND paused_at IS NOT NULL`,
  /** () -> every control row, by name (one per class ever paused or rate-limited). */
  list: `SELECT class, paused_at, paused_by, resumed_at, resumed_by FROM class_controls ORDER BY class`,
  /**
   * (class) -> paused_at, the class's control row locked until commit: the rate-limited claims of one class
   * take turns here, so each counts the starts of the one before. No row: the class has none yet (addControl).
   */
  lockControl: `SELECT paused_at FROM class_controls WHERE class = $1 FOR UPDATE`,
  /** (class) a control row, not paused, unless one exists. */
  addControl: `INSERT INTO class_controls (class) VALUES ($1) ON CONFLICT (class) DO NOTHING`,
  /** (class, since) -> starts granted after `since`, through class_starts_window. */
  startsSince: `SELECT count(*)::int AS count FROM class_starts WHERE class = $1 AND claimed_at > $2`,
  /** (class, since, offset) -> the time of the start at that place after `since`, oldest first; no row: fewer. */
  startAt: `SELECT claimed_at FROM class_starts WHERE class = $1 AND claimed_at > $2 ORDER BY claimed_at LIMIT 1 OFFSET $3`,
  /**
   * (class, now, count, before, limit) records `count` starts granted now, and deletes up to `limit` starts
   * stamped at or before `before` (always before now, so never one just added), in one statement.
   */
  startsRecord: `WITH added AS (INSERT INTO class_starts (class, claimed_at) SELECT $1, $2 FROM generate_series(1, $3::int))
    DELETE FROM class_starts WHERE id = ANY (ARRAY (SELECT id FROM class_starts WHERE class = $1 AND claimed_at <= $4 LIMIT $5))`,
  /** (supervisorId, class, reason, now) the supervisor has disabled the class (replacing its earlier record of it). */
  disable: `INSERT INTO disabled_classes (supervisor_id, class, reason, disabled_at) VALUES ($1, $2, $3, $4)
    ON CONFLICT (supervisor_id, class) DO UPDATE SET reason = excluded.reason, disabled_at = excluded.disabled_at`,
  /** (supervisorId, class) the class is enabled again; no row changed: it was not disabled there. */
  enable: `DELETE FROM disabled_classes WHERE supervisor_id = $1 AND class = $2`,
  /** (supervisorId) every class of the supervisor (it exits), by the primary key's prefix. */
  enableAll: `DELETE FROM disabled_classes WHERE supervisor_id = $1`,
  /**
   * (liveSince) -> the classes disabled by supervisors alive (not exited, heartbeat since liveSince), by class.
   * The table holds a row per class per supervisor that disabled it, so it is read whole; each supervisor by key.
   */
  disabledList: `SELECT d.class, d.supervisor_id, s.host, d.reason, d.disabled_at
    FROM disabled_classes AS d JOIN workers AS s ON s.id = d.supervisor_id
    WHERE s.exited_at IS NULL AND s.heartbeat_at >= $1 ORDER BY d.class, d.supervisor_id`,
  /** (class, now) -> due: true when a queued job of the class may run now, through jobs_claim. */
  due: `SELECT EXISTS (SELECT 1 FROM jobs WHERE status = 'QUEUED' AND class = $1 AND run_at <= $2) AS due`,
});
