import { FLUSH_AFTER_MS } from './group-commit.js';

/** A job that ran at least this long ends the prefetch: claims then bring only what the free slots start at once. */
export const FAST_JOB_MS = 5;

export interface PrefetchLimits {
  slots: number;
  /** The most jobs a child holds at once (config `claim_batch`). */
  claimBatch: number;
  /** A claim of a rate-limited class starts its window, spent even if handed back: no prefetch. */
  rateLimited: boolean;
}

/**
 * How many jobs a claim asks for beyond the free slots: none at first,
 * doubling (0, 1, 3, 7, ...) after each claim whose jobs were all fast, back
 * to none after a slow job or a hand-back.
 */
export class Prefetch {
  private size = 0;
  private allFast = true;
  /** Recent handler run time in ms (a moving average). */
  private meanJobMs = 0;
  private lastClaimed = 0;

  constructor(private readonly limits: PrefetchLimits) {}

  /**
   * The prefetch for the claim about to be made: grown if the last claim
   * brought jobs and all that ended since were fast, else none. Capped at
   * claim_batch held at once, and at what the slots start within half of
   * FLUSH_AFTER_MS at the recent run time (a job waiting longer is handed
   * back, a write for nothing).
   */
  next(): number {
    const { slots, claimBatch, rateLimited } = this.limits;
    const startable = Math.floor((slots * FLUSH_AFTER_MS) / 2 / Math.max(this.meanJobMs, 0.01));
    const most = rateLimited ? 0 : Math.max(0, Math.min(claimBatch - slots, startable));
    this.size = this.allFast && this.lastClaimed > 0 ? Math.min(most, this.size * 2 + 1) : 0;
    this.allFast = true;
    return this.size;
  }

  /** What the claim brought. */
  claimed(count: number): void {
    this.lastClaimed = count;
  }

  /** A handler ended: `runMs` from performance.now(), finer than `durationMs`, the millisecond stamps. */
  jobEnded(runMs: number, durationMs: number): void {
    this.meanJobMs += (runMs - this.meanJobMs) / 8;
    if (durationMs >= FAST_JOB_MS) this.allFast = false;
  }

  /** A claimed job went back unstarted: the last prefetch was too much. */
  handedBack(): void {
    this.allFast = false;
  }
}
