/** The overview's throughput chart: SUCCEEDED and FAILED jobs per minute over the last hour, the minutes that ended read once. */
import type { OperatorStore } from '../store/types.js';

export const MINUTE_MS = 60_000;
export const CHART_MINUTES = 60;
/**
 * A minute that ended this long ago no longer changes and is kept: by then
 * the writes stamped within it have committed (a write takes its time when
 * its transaction starts), also from a host whose clock is a little behind.
 * A FAILED job retried later leaves its minute as it was: the chart says
 * what finished then.
 */
export const SETTLE_MS = 5_000;

/** Succeeded and failed jobs that finished within one minute. */
export interface ThroughputMinute {
  /** Start of the minute, ms since the epoch. */
  minute: number;
  SUCCEEDED: number;
  FAILED: number;
}

/** The last hour by minute, oldest first, every minute present; each store read covers only the minutes not yet kept. */
export class ThroughputChart {
  /** Settled minutes, by their start. */
  private readonly kept = new Map<number, ThroughputMinute>();

  constructor(private readonly store: Pick<OperatorStore, 'statsFinishedByMinute'>) {}

  async minutes(now: number): Promise<ThroughputMinute[]> {
    const current = Math.floor(now / MINUTE_MS) * MINUTE_MS;
    const first = current - (CHART_MINUTES - 1) * MINUTE_MS;
    for (const minute of this.kept.keys()) if (minute < first || minute > current) this.kept.delete(minute);
    let since = first;
    while (this.kept.has(since)) since += MINUTE_MS;
    const read = new Map<number, ThroughputMinute>();
    for (const row of await this.store.statsFinishedByMinute({ since, until: current + MINUTE_MS })) {
      const minute = read.get(row.minute) ?? { minute: row.minute, SUCCEEDED: 0, FAILED: 0 };
      minute[row.status] += row.count;
      read.set(row.minute, minute);
    }
    const chart: ThroughputMinute[] = [];
    for (let minute = first; minute <= current; minute += MINUTE_MS) {
      const counts = this.kept.get(minute) ?? read.get(minute) ?? { minute, SUCCEEDED: 0, FAILED: 0 };
      if (minute >= since && minute + MINUTE_MS + SETTLE_MS <= now) this.kept.set(minute, counts);
      chart.push(counts);
    }
    return chart;
  }
}
