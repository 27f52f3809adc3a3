import { afterRollUp, COST_TOP_KEPT, MINUTE_MS, nextRollUp, type RolledMinutes } from '../stats-window.js';
import type { RollupStatements } from './sql/rollup.js';

/** The minutes the rollup covers; undefined before its first roll-up. */
export function rolledMinutes(statements: RollupStatements): RolledMinutes | undefined {
  const row = statements.state.get() as { from: number | null; until: number | null } | undefined;
  return row?.from == null || row.until == null ? undefined : { from: row.from, until: row.until };
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
  for (const drop of [statements.dropJobEnds, statements.dropCost, statements.dropCostTop]) drop.run({ keepFrom: covered.from });
  statements.save.run({ keepFrom: covered.from, until: covered.until });
  return (range.until - range.from) / MINUTE_MS;
}
