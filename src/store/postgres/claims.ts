/** The PostgreSQL claim, with its rate limit's part (the rules both drivers share: ../rate-limit.ts). */
import { claimedJobs, type ClaimedRow } from '../facts.js';
import { allowance, prunePlan, rateLimitedClass, windowStart } from '../rate-limit.js';
import type { ClaimedJob, ClaimRequest, RateLimit } from '../types.js';
import { changes, first, rows, type Db } from './connection.js';
import { CLASS_SQL } from './sql/classes.js';
import { LEASE_SQL } from './sql/leases.js';

/**
 * Inside a transaction: claim up to `limit` due jobs, each with its own token
 * and attempt row (its start will carry the claim). A rate-limited claim
 * takes what its window has left.
 */
export async function claim(db: Db, params: ClaimRequest, now: number): Promise<ClaimedJob[]> {
  const { rateLimit } = params;
  const limit =
    rateLimit === undefined
      ? params.limit
      : await rateAllowance(db, rateLimitedClass(params), rateLimit, params.limit, now);
  if (params.classes.length === 0 || limit < 1) return [];
  const [statement, classes] =
    params.classes.length === 1
      ? [LEASE_SQL.claimOneClass, params.classes[0]]
      : [LEASE_SQL.claimManyClasses, params.classes];
  const claimed = await rows<ClaimedRow>(db, statement, [
    classes,
    params.ownerId,
    now,
    now + params.leaseMs,
    limit,
    params.classMaxRetries,
  ]);
  if (rateLimit !== undefined && claimed.length > 0)
    await recordStarts(db, rateLimitedClass(params), rateLimit, claimed.length, now);
  return claimedJobs(claimed, params.ownerId, now);
}

/**
 * Inside a transaction: how many jobs a rate-limited class may claim now.
 * Its claims take turns on the class's control row (locked until commit,
 * created on the first one), so each counts every start granted before it,
 * whichever host granted it; a paused class may take none.
 */
async function rateAllowance(
  db: Db,
  jobClass: string,
  rateLimit: RateLimit,
  limit: number,
  now: number,
): Promise<number> {
  let control = await first<{ paused_at: number | null }>(db, CLASS_SQL.lockControl, [jobClass]);
  if (control === undefined) {
    await changes(db, CLASS_SQL.addControl, [jobClass]);
    control = await first<{ paused_at: number | null }>(db, CLASS_SQL.lockControl, [jobClass]);
  }
  if (control?.paused_at !== null) return 0;
  const started =
    (await first<{ count: number }>(db, CLASS_SQL.startsSince, [jobClass, windowStart(now, rateLimit)]))?.count ?? 0;
  return allowance(limit, rateLimit, started);
}

/** Inside the claim's transaction: the starts it granted, and the oldest ones that no window needs any more dropped. */
async function recordStarts(db: Db, jobClass: string, rateLimit: RateLimit, count: number, now: number): Promise<void> {
  const prune = prunePlan(now, rateLimit, count);
  await changes(db, CLASS_SQL.startsRecord, [jobClass, now, count, prune.before, prune.limit]);
}
