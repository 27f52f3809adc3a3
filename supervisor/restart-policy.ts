import type { RestartConfig } from '../src/config/schema.js';

export const RESTART_BASE_DELAY_MS = 500;
export const RESTART_MAX_DELAY_MS = 30_000;

export type RestartDecision =
  { restart: true; delayMs: number; recentCrashes: number } | { restart: false; recentCrashes: number };

/**
 * A class's crash history: give up (a crash loop) after more than
 * max_restarts crashes within within_seconds; otherwise restart after a
 * delay that doubles with each crash in a row of a child that finished no
 * job (a child that did useful work before dying restarts at once, like
 * PM2's backoff that resets once the app has run).
 */
export class RestartPolicy {
  private crashes: number[] = [];

  constructor(private readonly config: RestartConfig) {}

  /** Record a crash at `now` (ms), the `fruitless`-th in a row of its slot, and decide. */
  onCrash(now: number, fruitless: number): RestartDecision {
    const windowStart = now - this.config.within_seconds * 1000;
    this.crashes = [...this.crashes.filter((at) => at > windowStart), now];
    const recentCrashes = this.crashes.length;
    if (recentCrashes > this.config.max_restarts) return { restart: false, recentCrashes };
    const delayMs = Math.min(RESTART_MAX_DELAY_MS, RESTART_BASE_DELAY_MS * 2 ** Math.max(0, fruitless - 1));
    return { restart: true, delayMs, recentCrashes };
  }
}
