/**
 * The stats rollup (migration 10): the finished jobs and measured attempts
 * of each minute, summed by a supervisor (`statsRollUp`), so that the
 * operator's windowed reads (`stats`, the overview) cost the minutes in the
 * window, not the jobs. A roll-up sums what ended between the last one's
 * end and a grace ago, in the middle of a minute too: the next adds the
 * rest of that minute to the same rows. A read takes what the rollup
 * covers from it, and everything else (the window's first, partial minute
 * and what ended since the rollup's end) from the jobs themselves: the
 * answer is the same as a read of the jobs alone, and the part read from
 * the jobs is the grace and the time since the last roll-up, whatever the
 * throughput.
 */
export const MINUTE_MS = 60_000;
/** Rolled-up minutes are kept this long: the default `stats` window (24 h) and an hour to spare. */
export const ROLLUP_KEEP_MS = 25 * 3_600_000;
/**
 * A roll-up sums at least this much time (a catch-up, maxMinutes whole, always does). Every supervisor on the queue
 * ticks each second: without a stride, K of them summed each second in K pieces, each piece a transaction with
 * its fixed costs (the rollup's row lock, the look at open transactions, the minute's costliest ranked again).
 * Under the supervisors' interval, so that one alone still sums at each tick.
 */
export const ROLLUP_STRIDE_MS = 500;
/** Each minute keeps its costliest attempts, this many by CPU and this many by memory: a ranking of more reads the jobs. */
export const COST_TOP_KEPT = 50;

/** The time [from, until) that the rollup has summed (`until` may fall mid-minute); none yet on a new store. */
export interface RolledMinutes {
  from: number;
  until: number;
}

/** The stats_rollup row as both drivers read it: null columns before the first roll-up. */
export type RolledRow = { from: number | null; until: number | null };

/** The minutes a stats_rollup row says are covered; undefined before the first roll-up. */
export const rolledMinutesOf = (row: RolledRow | undefined): RolledMinutes | undefined =>
  row?.from == null || row.until == null ? undefined : { from: row.from, until: row.until };

/** How many minutes a range holds. */
export const minutesIn = (range: RolledMinutes) => (range.until - range.from) / MINUTE_MS;

/** Where a window starting at `since` is read: jobs in [headFrom, headUntil), rollup minutes in [rolledFrom, rolledUntil), jobs from tailFrom on. */
export interface WindowParts {
  headFrom: number;
  headUntil: number;
  rolledFrom: number;
  rolledUntil: number;
  tailFrom: number;
}

/** The parts as positional values, in the order of the PostgreSQL statements' $1..$5. */
export const partValues = (p: WindowParts) => [p.headFrom, p.headUntil, p.rolledFrom, p.rolledUntil, p.tailFrom];

export const floorMinute = (ms: number) => Math.floor(ms / MINUTE_MS) * MINUTE_MS;
/** The first minute the rollup keeps at `now`. */
export const oldestKept = (now: number) => floorMinute(now - ROLLUP_KEEP_MS);
const ceilMinute = (ms: number) => Math.ceil(ms / MINUTE_MS) * MINUTE_MS;

/**
 * The window from `since` on (and before `until`, a minute's start), split at the minutes the rollup
 * covers; `useRollup` false: all of it from the jobs.
 */
export function windowParts(
  since: number,
  rolled: RolledMinutes | undefined,
  options: { until?: number; useRollup?: boolean } = {},
): WindowParts {
  const start = Math.max(ceilMinute(since), rolled?.from ?? 0);
  const rolledUntil = Math.min(rolled?.until ?? 0, options.until === undefined ? Infinity : floorMinute(options.until));
  if (options.useRollup === false || start >= rolledUntil)
    return { headFrom: since, headUntil: since, rolledFrom: 0, rolledUntil: 0, tailFrom: since };
  return { headFrom: since, headUntil: start, rolledFrom: start, rolledUntil, tailFrom: rolledUntil };
}

/**
 * A range of `maxMinutes` whole is a catch-up (a new store's day, or after
 * the supervisors were down): summed even where nothing ended, so that it
 * is done at start, before jobs run, and not in the middle of the first
 * ones (on SQLite, hundreds of write transactions back to back). Only the
 * tail is skipped while nothing new has ended.
 */
export function isCatchUp(range: RolledMinutes, maxMinutes: number): boolean {
  return range.until - range.from >= maxMinutes * MINUTE_MS;
}

/**
 * What a roll-up at `now` sums next: from the rollup's end to `graceMs`
 * before now (the driver's bound on how late a finished job can commit
 * behind its finished_at: nothing before it can arrive after the
 * roll-up), at most `maxMinutes`; undefined until a stride has passed
 * since the rollup's end.
 */
export function nextRollUp(
  rolled: RolledMinutes | undefined,
  now: number,
  maxMinutes: number,
  graceMs: number,
): RolledMinutes | undefined {
  // A rollup left behind longer than it keeps minutes starts again at the oldest it would keep.
  const oldest = oldestKept(now);
  const from = Math.max(rolled?.until ?? oldest, oldest);
  const until = Math.min(from + maxMinutes * MINUTE_MS, now - graceMs);
  return until - from >= ROLLUP_STRIDE_MS ? { from, until } : undefined;
}

/** What the rollup covers once `range` is summed: minutes older than it keeps are dropped, and a gap starts it again. */
export function afterRollUp(rolled: RolledMinutes | undefined, range: RolledMinutes, now: number): RolledMinutes {
  const from = rolled === undefined || range.from > rolled.until ? range.from : Math.max(rolled.from, oldestKept(now));
  return { from, until: range.until };
}
