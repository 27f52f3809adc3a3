import {
  afterRollUp,
  COST_TOP_KEPT,
  minutesIn,
  nextRollUp,
  rolledMinutesOf,
  type RolledMinutes,
  type RolledRow,
} from '../stats-window.js';
import { first, type Db } from './connection.js';
import { ROLLUP_SQL } from './sql/rollup.js';

/** The minutes the rollup covers; undefined before its first roll-up. */
export async function rolledMinutes(db: Db): Promise<RolledMinutes | undefined> {
  return rolledMinutesOf(await first<RolledRow>(db, ROLLUP_SQL.state));
}

/** Inside a transaction: sum the next minutes that ended (at most `maxMinutes`); how many were summed. */
export async function rollUp(db: Db, now: number, maxMinutes: number): Promise<number> {
  const rolled = rolledMinutesOf(await first<RolledRow>(db, ROLLUP_SQL.lockState));
  const range = nextRollUp(rolled, now, maxMinutes);
  if (range === undefined) return 0;
  const keep = afterRollUp(rolled, range, now);
  await db.query({ ...ROLLUP_SQL.rollUp, values: [range.from, range.until, COST_TOP_KEPT, keep.from] });
  return minutesIn(range);
}
