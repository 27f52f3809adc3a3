import {
  afterRollUp,
  COST_TOP_KEPT,
  floorMinute,
  isCatchUp,
  minutesIn,
  nextRollUp,
  rolledMinutesOf,
  type RolledMinutes,
  type RolledRow,
} from '../stats-window.js';
import { first, type Db } from './connection.js';
import { ROLLUP_SQL } from './sql/rollup.js';

/**
 * How late a finished job can commit behind its finished_at: its time is taken by its host before the commit,
 * and hosts' clocks differ.
 */
export const POSTGRES_ROLLUP_GRACE_MS = 60_000;

/** The time the rollup covers; undefined before its first roll-up. */
export async function rolledMinutes(db: Db): Promise<RolledMinutes | undefined> {
  return rolledMinutesOf(await first<RolledRow>(db, ROLLUP_SQL.state));
}

/**
 * Inside a transaction: sum what ended since the rollup's end (at most `maxMinutes`); how many minutes that
 * was. While no job has finished since the rollup's end only a catch-up (isCatchUp) is written: a later roll-up
 * takes the rest on. A catch-up over minutes where nothing ended covers them all at once, as SQLite's does: a
 * new queue's day, a few empty minutes per transaction, held the rollup's row lock for hundreds of them while
 * its first jobs ran.
 */
export async function rollUp(db: Db, now: number, maxMinutes: number): Promise<number> {
  const rolled = rolledMinutesOf(await first<RolledRow>(db, ROLLUP_SQL.lockState));
  let range = nextRollUp(rolled, now, maxMinutes, POSTGRES_ROLLUP_GRACE_MS);
  if (range === undefined) return 0;
  const pending = [range.from, now - POSTGRES_ROLLUP_GRACE_MS];
  if (isCatchUp(range, maxMinutes)) {
    const at = (await first<{ at: string | null }>(db, ROLLUP_SQL.firstEnded, pending))?.at ?? null;
    const emptyUntil = at === null ? now - POSTGRES_ROLLUP_GRACE_MS : floorMinute(Number(at));
    if (emptyUntil > range.until) range = { from: range.from, until: emptyUntil };
  } else if (rolled !== undefined && (await first(db, ROLLUP_SQL.anyEnded, pending)) === undefined) return 0;
  const keep = afterRollUp(rolled, range, now);
  await db.query({ ...ROLLUP_SQL.rollUp, values: [range.from, range.until, COST_TOP_KEPT, keep.from] });
  await db.query({ ...ROLLUP_SQL.pruneCostTop, values: [range.from, COST_TOP_KEPT] });
  return minutesIn(range);
}
