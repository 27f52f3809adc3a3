import { FLUSH_AFTER_MS } from './group-commit.js';

export interface PrefetchLimits {
  slots: number;
  /** The most jobs a child holds at once (config `claim_batch`). */
  claimBatch: number;
  /** A claim of a rate-limited class starts its window, spent even if handed back: no prefetch. */
  rateLimited: boolean;
}

/**
 * How many jobs a claim asks for beyond the free slots. The prefetch earned
 * doubles (0, 1, 3, 7, ...) after each claim that brought jobs, up to
 * claim_batch held at once, and goes back to none after a hand-back (a job
 * that waited past FLUSH_AFTER_MS: the last prefetch was too much) or an
 * empty claim. What a claim asks for is that, capped by what the slots
 * start within half of FLUSH_AFTER_MS at the recent run time: jobs of a few
 * milliseconds come several to a transaction, and a slow job shrinks the
 * next claims without undoing what was earned. A job that looked slow
 * because its child was preempted moves the average a little, and does not
 * end the prefetch: with more children than cores preemption is common, and
 * ending the prefetch on it would shrink every batch.
 */
export class Prefetch {
  private earned = 0;
  private handedBackSinceClaim = false;
  /** Recent handler run time in ms (a moving average). */
  private meanJobMs = 0;
  private lastClaimed = 0;

  constructor(private readonly limits: PrefetchLimits) {}

  /** The prefetch for the claim about to be made. */
  next(): number {
    const { slots, claimBatch, rateLimited } = this.limits;
    if (rateLimited) return 0;
    this.earned =
      this.handedBackSinceClaim || this.lastClaimed === 0
        ? 0
        : Math.max(0, Math.min(claimBatch - slots, this.earned * 2 + 1));
    this.handedBackSinceClaim = false;
    const startable = Math.floor((slots * FLUSH_AFTER_MS) / 2 / Math.max(this.meanJobMs, 0.01));
    return Math.min(this.earned, startable);
  }

  /** What the claim brought. */
  claimed(count: number): void {
    this.lastClaimed = count;
  }

  /** A handler ended after `runMs` (from performance.now(), finer than the millisecond stamps). */
  jobEnded(runMs: number): void {
    this.meanJobMs += (runMs - this.meanJobMs) / 8;
  }

  /** A claimed job went back unstarted. */
  handedBack(): void {
    this.handedBackSinceClaim = true;
  }
}
