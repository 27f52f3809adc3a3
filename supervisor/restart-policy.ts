import type { RestartConfig } from '../src/config/types.js';

export const RESTART_BASE_DELAY_MS = 500;
export const RESTART_MAX_DELAY_MS = 30_000;

export type RestartDecision = { restart: true; delayMs: number; recentCrashes: number } | { restart: false; recentCrashes: number };

/**
 * A class's crash history: restart with exponential backoff, and give up (a
 * crash loop) after more than max_restarts crashes within within_seconds.
 */
export class RestartPolicy {
  private crashes: number[] = [];

  constructor(private readonly config: RestartConfig) {}

  /** Record a crash at `now` (ms) and decide. */
  onCrash(now: number): RestartDecision {
    const windowStart = now - this.config.within_seconds * 1000;
    this.crashes = [...this.crashes.filter((at) => at > windowStart), now];
    const recentCrashes = this.crashes.length;
    if (recentCrashes > this.config.max_restarts) return { restart: false, recentCrashes };
    const delayMs = Math.min(RESTART_MAX_DELAY_MS, RESTART_BASE_DELAY_MS * 2 ** (recentCrashes - 1));
    return { restart: true, delayMs, recentCrashes };
  }
}
