import {
  afterRollUp,
  COST_TOP_KEPT,
  floorMinute,
  isCatchUp,
  MINUTE_MS,
  minutesIn,
  nextRollUp,
  rolledMinutesOf,
  type RolledMinutes,
  type RolledRow,
} from '../stats-window.js';
import { BUSY_TIMEOUT_MS } from './connection.js';
import type { RollupStatements } from './sql/rollup.js';

/**
 * How late a finished job can commit behind its finished_at. One writer
 * commits at a time, and a write takes its time as it starts trying for the
 * lock, which it waits for at most BUSY_TIMEOUT_MS before it tries again
 * with a new time; so a write that commits after a roll-up took its time
 * at most a busy timeout before the roll-up's. The rest is room for a
 * process descheduled between its time and its try, and a small step of
 * the wall clock.
 */
export const SQLITE_ROLLUP_GRACE_MS = 5 * BUSY_TIMEOUT_MS;

/** The time the rollup covers; undefined before its first roll-up. */
export function rolledMinutes(statements: RollupStatements): RolledMinutes | undefined {
  return rolledMinutesOf(statements.state.get() as RolledRow | undefined);
}

/**
 * Inside a write transaction: sum what ended since the rollup's end (at most `maxMinutes`); how many minutes
 * that was. While no job has finished since the rollup's end only a catch-up (isCatchUp) is written (an idle
 * queue's file stays still but once every `maxMinutes`): a later roll-up takes the rest on. A catch-up over
 * minutes where nothing ended covers them all at once: one writer at a time, and a new store's day summed a
 * few empty minutes per transaction kept the workers waiting in line for its hundreds of transactions.
 */
export function rollUp(statements: RollupStatements, now: number, maxMinutes: number): number {
  const rolled = rolledMinutes(statements);
  const range = nextRollUp(rolled, now, maxMinutes, SQLITE_ROLLUP_GRACE_MS);
  if (range === undefined) return 0;
  const pending = { from: range.from, until: now - SQLITE_ROLLUP_GRACE_MS };
  if (isCatchUp(range, maxMinutes)) {
    const first = (statements.firstEnded.get(pending) as { at: number | null }).at;
    const emptyUntil = first === null ? pending.until : floorMinute(first);
    if (emptyUntil > range.until) return covered(statements, rolled, { from: range.from, until: emptyUntil }, now);
  } else if (rolled !== undefined && statements.anyEnded.get(pending) === undefined) return 0;
  const bind = { from: range.from, until: range.until, kept: COST_TOP_KEPT };
  statements.addJobEnds.run(bind);
  statements.addCost.run(bind);
  for (let minute = floorMinute(range.from); minute < range.until; minute += MINUTE_MS) {
    const part = {
      from: Math.max(range.from, minute),
      until: Math.min(range.until, minute + MINUTE_MS),
      kept: COST_TOP_KEPT,
    };
    statements.addCostTopCpu.run(part);
    statements.addCostTopRss.run(part);
  }
  statements.pruneCostTop.run({ from: range.from, kept: COST_TOP_KEPT });
  return covered(statements, rolled, range, now);
}

/** Say the rollup covers `range` too, dropping the minutes older than it keeps; how many minutes `range` was. */
function covered(statements: RollupStatements, rolled: RolledMinutes | undefined, range: RolledMinutes, now: number) {
  const after = afterRollUp(rolled, range, now);
  for (const drop of [statements.dropJobEnds, statements.dropCost, statements.dropCostTop])
    drop.run({ keepFrom: after.from });
  statements.save.run({ keepFrom: after.from, until: after.until });
  return minutesIn(range);
}
