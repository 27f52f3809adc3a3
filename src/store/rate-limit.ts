/**
 * The rules both drivers share for rate-limited claims. Each claim granted to
 * a rate-limited class leaves a row (class, claimed_at) in class_starts; a
 * claim may take what the window has left: `max` minus the rows stamped after
 * `windowStart(now)`. Claims of one class are serialized (SQLite: the one writer;
 * PostgreSQL: a lock on the class's control row), so the count is exact.
 */
import type { ClaimRequest, RateLimit } from './types.js';

/**
 * How long a start row outlives its window. A claim's `now` is read before
 * its transaction takes the lock, so a claim that waited may stamp a time
 * that far back, and must still find every row of its window. The count has
 * no upper bound for the same reason (rows stamped "after" a late `now`).
 */
export const START_KEPT_EXTRA_MS = 10_000;
/** Aged-out rows deleted per claim transaction, besides as many as it added: short, and the table never grows. */
const PRUNE_BATCH = 64;

/** The class a rate-limited claim is for; a claim of several classes cannot carry one rate limit. */
export function rateLimitedClass(request: ClaimRequest): string {
  const [only] = request.classes;
  if (request.classes.length !== 1 || only === undefined)
    throw new Error('a rate-limited claim names exactly one class');
  return only;
}

/**
 * A rate limit bounds handler starts, and a handler starts a little after its
 * claim: so the claims of any window of per_seconds plus this margin are
 * held to `max`, and a worker hands back, unstarted, a job of a rate-limited
 * class it could not start within this margin of asking for it (its claim is
 * stamped after it asked). Every start then falls within the margin after its
 * claim, and no window of per_seconds holds more than `max` starts.
 */
export const START_MARGIN_MS = 100;

/** Rows stamped after this count against a claim at `now`. */
export const windowStart = (now: number, rateLimit: RateLimit): number => now - rateLimit.perMs - START_MARGIN_MS;

/** When a start stamped at `claimedAt` stops counting against the window: room for one more then. */
export const windowLeftAt = (claimedAt: number, rateLimit: RateLimit): number =>
  claimedAt + rateLimit.perMs + START_MARGIN_MS;

/** How many jobs a claim may take with `started` in the window. */
export const allowance = (limit: number, rateLimit: RateLimit, started: number): number =>
  Math.max(0, Math.min(limit, rateLimit.max - started));

/** The pruning a claim that added `added` rows does: rows stamped at or before `before`, at most `limit` of them. */
export const prunePlan = (now: number, rateLimit: RateLimit, added: number) => ({
  before: windowStart(now, rateLimit) - START_KEPT_EXTRA_MS,
  limit: added + PRUNE_BATCH,
});

/**
 * With `started` in the window: the place (oldest first, from 0) of the row
 * whose leaving the window makes room for one more start; none while there is room.
 */
export const blockingStart = (rateLimit: RateLimit, started: number): number | null =>
  started < rateLimit.max ? null : started - rateLimit.max;
