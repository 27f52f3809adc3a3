/**
 * Where the report's windows start. The stats rollup sums whole minutes, and a window starting
 * mid-minute reads that first, partial minute from the jobs: right after a burst, the busiest
 * minute row by row. So a window of `windowMs` starts at the start of the minute `windowMs` ago,
 * and is that much longer (up to a minute): every read of it is the rollup's minutes and the
 * jobs since the rollup's end.
 */
import { floorMinute } from '../store/stats-window.js';

/** The start of a window reaching `windowMs` back from `now`: the start of that minute. */
export const windowSince = (now: number, windowMs: number): number => floorMinute(now - windowMs);
