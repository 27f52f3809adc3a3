import type { AttemptCost } from '../src/store/types.js';

/**
 * A reading is shared by whoever asks within this long. A resident-set
 * reading is a read of /proc/self/stat, not small beside a short job's own
 * bookkeeping in the child, and short jobs run back to back: the end of one
 * and the start of the next share a reading.
 */
export const READING_SHARED_MS = 1;

const cpuMicros = (): number => {
  const cpu = process.cpuUsage();
  return cpu.user + cpu.system;
};

/**
 * The child's own readings of what its jobs cost, from the counters the
 * supervisor's pidusage reads from outside: the process's CPU time and its
 * resident set size.
 */
export class CostMeter {
  private reading = { at: -Infinity, bytes: 0 };
  private lastEnd = { at: -Infinity, micros: 0 };

  /** The resident set size now (a reading at most READING_SHARED_MS old). */
  rssBytes(): number {
    const now = performance.now();
    if (now - this.reading.at > READING_SHARED_MS) this.reading = { at: now, bytes: process.memoryUsage.rss() };
    return this.reading.bytes;
  }

  /**
   * The process's CPU time (µs) at an attempt's start: the reading of an
   * attempt's end within READING_SHARED_MS, else a new one. Ends always read
   * afresh, so every µs between two readings is some attempt's: none is lost
   * or counted twice by a job that ran back to back with another.
   */
  cpuAtStart(): number {
    return performance.now() - this.lastEnd.at <= READING_SHARED_MS ? this.lastEnd.micros : cpuMicros();
  }

  cpuAtEnd(): number {
    this.lastEnd = { at: performance.now(), micros: cpuMicros() };
    return this.lastEnd.micros;
  }

  /** Start measuring an attempt whose handler begins now. */
  start(): AttemptMeter {
    return new AttemptMeter(this);
  }
}

/** One attempt's cost: CPU from its start to its end, and the highest resident set read at its start, at each tick while it runs, and at its end. */
export class AttemptMeter {
  private readonly cpuAtStart: number;
  private peakRssBytes: number;

  constructor(private readonly meter: CostMeter) {
    this.cpuAtStart = meter.cpuAtStart();
    this.peakRssBytes = meter.rssBytes();
  }

  /** A reading taken while the attempt runs (the run loop's periodic tick). */
  observe(rssBytes: number): void {
    this.peakRssBytes = Math.max(this.peakRssBytes, rssBytes);
  }

  /** The cost up to now, with a last reading of the resident set. */
  read(): AttemptCost {
    this.observe(this.meter.rssBytes());
    // cpuUsage counts microseconds: kept to the microsecond, as milliseconds.
    return { cpuMs: (this.meter.cpuAtEnd() - this.cpuAtStart) / 1000, peakRssBytes: this.peakRssBytes };
  }
}
