import { prepareAll, type SqliteDb } from '../connection.js';

/** The file's timeline (clock_anchor, one row): a wall time and the monotonic reading it was taken at, in one boot. */
export const CLOCK_SQL = {
  /** () -> the anchor; no row: none yet. */
  get: `SELECT boot_id, wall_ms, monotonic_ms FROM clock_anchor WHERE id = 1`,
  /** (boot_id, wall_ms, monotonic_ms) sets the anchor: a new boot's, or a step of this one's towards the wall clock. */
  set: `INSERT INTO clock_anchor (id, boot_id, wall_ms, monotonic_ms) VALUES (1, @boot_id, @wall_ms, @monotonic_ms)
    ON CONFLICT (id) DO UPDATE SET boot_id = excluded.boot_id, wall_ms = excluded.wall_ms, monotonic_ms = excluded.monotonic_ms`,
};

export const prepareClockStatements = (db: SqliteDb) => prepareAll(db, CLOCK_SQL);

export type ClockStatements = ReturnType<typeof prepareClockStatements>;
