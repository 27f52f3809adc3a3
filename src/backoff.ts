import { DEFAULT_BACKOFF } from './limits.js';

/** A class's `backoff` config (queue.yaml). */
export interface BackoffConfig {
  base_seconds: number;
  max_seconds: number;
  jitter: boolean;
}

/** Delay before retry number `attempt + 1`, for a job of `jobClass` whose attempt `attempt` just failed. */
export type RetryDelay = (jobClass: string, attempt: number) => number;

export interface BackoffPolicy {
  baseSeconds: number;
  maxSeconds: number;
  jitter: boolean;
}

/**
 * Delay in ms before the retry that follows failed attempt number `attempt`
 * (1-based): base * 2^(attempt-1), capped at max. With jitter the delay is
 * drawn from [d/2, d] ("equal jitter"): retries of jobs that failed together
 * spread out, and no retry comes sooner than half the nominal delay.
 */
export function retryDelayMs(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, attempt - 1);
  const nominal = Math.min(policy.maxSeconds, policy.baseSeconds * 2 ** Math.min(exponent, 52)) * 1000;
  const delay = policy.jitter ? nominal / 2 + random() * (nominal / 2) : nominal;
  return Math.round(delay);
}

/** A class's `backoff` config as the policy retryDelayMs reads. */
export function backoffPolicy(backoff: BackoffConfig): BackoffPolicy {
  return { baseSeconds: backoff.base_seconds, maxSeconds: backoff.max_seconds, jitter: backoff.jitter };
}

/**
 * The retry delay of each class as its config says, for whoever takes a job
 * back; a class the config does not know gets the schema's default backoff.
 */
export function retryDelayFor(classes: readonly { name: string; backoff: BackoffConfig }[]): RetryDelay {
  const byClass = new Map(classes.map((c) => [c.name, backoffPolicy(c.backoff)]));
  const fallback = backoffPolicy(DEFAULT_BACKOFF);
  return (jobClass, attempt) => retryDelayMs(byClass.get(jobClass) ?? fallback, attempt);
}
