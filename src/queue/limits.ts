/**
 * Defaults shared by the library, the CLI and the config. Plain values, so a
 * command run without a config does not load the config's schema (zod).
 * The schema's types come from these values, so they are not annotated with them.
 */
export const DEFAULT_PAYLOAD_LIMIT_BYTES = 1024 * 1024;
export const DEFAULT_MAX_RETRIES = 5;
export const MAX_PRIORITY = 1_000_000;

export const DEFAULT_BACKOFF = Object.freeze({ base_seconds: 1, max_seconds: 300, jitter: true });

/**
 * The most jobs a child holds at once, by default: with one slot, a crash
 * during a job blames that job and hands the rest back without spending
 * their retries, so it can hold many (dozens of fast jobs then share one
 * transaction's cost); with several, nobody can tell which of
 * them ran, a crash spends a retry of every job held, so it holds fewer: 16,
 * or twice its slots, so that the next jobs wait ready while the slots run
 * (a batch no bigger than the slots leaves some of them idle between claims).
 */
export function defaultClaimBatch(concurrency: number): number {
  return concurrency === 1 ? 64 : Math.max(16, 2 * concurrency);
}

/** A class's crash-loop limit: more than max_restarts crashes within within_seconds. */
export const DEFAULT_RESTART = Object.freeze({ max_restarts: 5, within_seconds: 60 });

/** What retention keeps, and how it deletes; also the policy of a `leasehold --db` run that has no config. */
export const DEFAULT_RETENTION = Object.freeze({
  succeeded_days: 30,
  failed_days: 90,
  cancelled_days: 30,
  batch_size: 5000,
  interval_seconds: 300,
});
