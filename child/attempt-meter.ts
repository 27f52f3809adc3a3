import type { AttemptCost } from '../src/store/types.js';

/**
 * A resident-set reading is shared by whoever asks within this long. One
 * costs about 10 µs (a read of /proc/self/stat), more than a no-op job's own
 * bookkeeping in the child, and short jobs run back to back: the end of one
 * and the start of the next share a reading.
 */
export const RSS_READING_SHARED_MS = 1;

/**
 * The child's own readings of what its jobs cost, from the counters the
 * supervisor's pidusage reads from outside: the process's CPU time and its
 * resident set size.
 */
export class CostMeter {
  private reading = { at: -Infinity, bytes: 0 };

  /** The resident set size now (a reading at most RSS_READING_SHARED_MS old). */
  rssBytes(): number {
    const now = performance.now();
    if (now - this.reading.at > RSS_READING_SHARED_MS) this.reading = { at: now, bytes: process.memoryUsage.rss() };
    return this.reading.bytes;
  }

  /** Start measuring an attempt whose handler begins now. */
  start(): AttemptMeter {
    return new AttemptMeter(this);
  }
}

/** One attempt's cost: CPU from its start to its end, and the highest resident set read at its start, at each tick while it runs, and at its end. */
export class AttemptMeter {
  private readonly cpuAtStart = process.cpuUsage();
  private peakRssBytes: number;

  constructor(private readonly meter: CostMeter) {
    this.peakRssBytes = meter.rssBytes();
  }

  /** A reading taken while the attempt runs (the run loop's periodic tick). */
  observe(rssBytes: number): void {
    this.peakRssBytes = Math.max(this.peakRssBytes, rssBytes);
  }

  /** The cost up to now, with a last reading of the resident set. */
  read(): AttemptCost {
    this.observe(this.meter.rssBytes());
    const cpu = process.cpuUsage(this.cpuAtStart);
    // cpuUsage counts microseconds: kept to the microsecond, as milliseconds.
    return { cpuMs: (cpu.user + cpu.system) / 1000, peakRssBytes: this.peakRssBytes };
  }
}
