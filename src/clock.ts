/** Time as integer UTC epoch milliseconds, injectable so tests control what SQL sees as "now". */
export interface Clock {
  now(): number;
}

/** This host's wall clock: a step of it (NTP, an operator) moves it. */
export const systemClock: Clock = { now: () => Date.now() };

/**
 * This host's monotonic clock (CLOCK_MONOTONIC), in ms: never stepped, and
 * on Linux the same for every process of one boot, so processes can share a
 * timeline anchored on it.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** A wall time read at a monotonic instant: `now()` is that wall time plus the monotonic time since. */
export interface Anchor {
  wallMs: number;
  monotonicMs: number;
}

/**
 * A clock that runs on the monotonic clock from an anchor, so a step of the
 * host's wall clock does not move it. Replacing the anchor may move it by a
 * few ms either way; it never runs backwards for its readers.
 */
export class AnchoredClock implements Clock {
  private last = Number.NEGATIVE_INFINITY;

  constructor(private anchor: Anchor) {}

  now(): number {
    const reading = Math.round(this.anchor.wallMs + monotonicMs() - this.anchor.monotonicMs);
    if (reading > this.last) this.last = reading;
    return this.last;
  }

  /** Follow a new anchor from now on. */
  reanchor(anchor: Anchor): void {
    this.anchor = anchor;
  }
}

/**
 * An anchor's next one, a bounded step towards the wall clock: the same
 * reading now plus at most `maxStepMs` (a slew, as NTP's, only faster), so
 * the clock never jumps.
 */
export function stepTowardsWall(anchor: Anchor, wallNowMs: number, monotonicNowMs: number, maxStepMs: number): Anchor {
  const reading = anchor.wallMs + monotonicNowMs - anchor.monotonicMs;
  const step = Math.max(-maxStepMs, Math.min(maxStepMs, wallNowMs - reading));
  return { wallMs: reading + step, monotonicMs: monotonicNowMs };
}
