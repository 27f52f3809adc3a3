/** The rate limit's part of a PostgreSQL claim transaction (the rules both drivers share: ../rate-limit.ts). */
import { allowance, prunePlan, windowStart } from '../rate-limit.js';
import type { RateLimit } from '../types.js';
import { changes, first, type Db } from './connection.js';
import { CLASS_SQL } from './sql/classes.js';

/**
 * Inside a transaction: how many jobs a rate-limited class may claim now.
 * Its claims take turns on the class's control row (locked until commit,
 * created on the first one), so each counts every start granted before it,
 * whichever host granted it; a paused class may take none.
 */
export async function rateAllowance(db: Db, jobClass: string, rateLimit: RateLimit, limit: number, now: number): Promise<number> {
  let control = await first<{ paused_at: number | null }>(db, CLASS_SQL.lockControl, [jobClass]);
  if (control === undefined) {
    await changes(db, CLASS_SQL.addControl, [jobClass]);
    control = await first<{ paused_at: number | null }>(db, CLASS_SQL.lockControl, [jobClass]);
  }
  if (control?.paused_at !== null) return 0;
  const started = (await first<{ count: number }>(db, CLASS_SQL.startsSince, [jobClass, windowStart(now, rateLimit)]))?.count ?? 0;
  return allowance(limit, rateLimit, started);
}

/** Inside the claim's transaction: the starts it granted, and the oldest ones that no window needs any more dropped. */
export async function recordStarts(db: Db, jobClass: string, rateLimit: RateLimit, count: number, now: number): Promise<void> {
  const prune = prunePlan(now, rateLimit, count);
  await changes(db, CLASS_SQL.startsAdd, [jobClass, now, count]);
  await changes(db, CLASS_SQL.startsPrune, [jobClass, prune.before, prune.limit]);
}
