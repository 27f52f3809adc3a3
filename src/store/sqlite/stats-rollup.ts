import {
  afterRollUp,
  COST_TOP_KEPT,
  minutesIn,
  nextRollUp,
  rolledMinutesOf,
  type RolledMinutes,
  type RolledRow,
} from '../stats-window.js';
import type { RollupStatements } from './sql/rollup.js';

/** The minutes the rollup covers; undefined before its first roll-up. */
export function rolledMinutes(statements: RollupStatements): RolledMinutes | undefined {
  return rolledMinutesOf(statements.state.get() as RolledRow | undefined);
}

/** Inside a write transaction: sum the next minutes that ended (at most `maxMinutes`); how many were summed. */
export function rollUp(statements: RollupStatements, now: number, maxMinutes: number): number {
  const rolled = rolledMinutes(statements);
  const range = nextRollUp(rolled, now, maxMinutes);
  if (range === undefined) return 0;
  const bind = { from: range.from, until: range.until, kept: COST_TOP_KEPT };
  statements.addJobEnds.run(bind);
  statements.addCost.run(bind);
  statements.addCostTop.run(bind);
  const covered = afterRollUp(rolled, range, now);
  for (const drop of [statements.dropJobEnds, statements.dropCost, statements.dropCostTop])
    drop.run({ keepFrom: covered.from });
  statements.save.run({ keepFrom: covered.from, until: covered.until });
  return minutesIn(range);
}
