/**
 * What jobs cost lately (`leasehold stats`' cost section): which classes,
 * and which of their attempts, used the most CPU and memory. Each attempt's
 * figures are its child process's (see AttemptCost): shared by the jobs that
 * ran together when `concurrency` is above 1.
 */
import type { AttemptCostRow, ClassCost, OperatorStore } from '../store/types.js';
import { byName } from './format.js';
import { windowSince } from './windows.js';

/** The window of the cost section: the last hour, as the throughput beside it. */
export const COST_WINDOW_MS = 3_600_000;

export interface CostReport {
  since: number;
  window_ms: number;
  /** Classes of the attempts measured in the window, most CPU first. */
  by_cpu: ClassCost[];
  /** The same classes, highest peak resident memory first. */
  by_memory: ClassCost[];
  /** The attempts that used the most CPU. */
  slowest: AttemptCostRow[];
  /** The attempts whose child reached the most resident memory. */
  hungriest: AttemptCostRow[];
}

/** Attempts that ended since the start of the minute COST_WINDOW_MS before `now`; `limit` attempts per list. */
export async function collectCost(store: OperatorStore, now: number, limit: number): Promise<CostReport> {
  const since = windowSince(now, COST_WINDOW_MS);
  const ranking = await store.statsCost({ since, limit });
  return {
    since,
    window_ms: now - since,
    by_cpu: ranking.by_class,
    by_memory: [...ranking.by_class].sort(
      (a, b) => b.max_peak_rss_bytes - a.max_peak_rss_bytes || byName(a.class, b.class),
    ),
    slowest: ranking.top_cpu,
    hungriest: ranking.top_rss,
  };
}
