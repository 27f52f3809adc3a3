/**
 * Every default of queue.yaml (config/schema.ts takes each from here), and
 * the defaults the library and the CLI share with it. Plain values, so a
 * command run without a config does not load the config's schema (zod).
 * The schema's types come from these values, so they are not annotated with
 * them. A field whose default is null (absent: no HTTP server, no log file)
 * says so in the schema itself.
 */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG = Object.freeze({ level: 'info', max_size_mb: 10, max_files: 5 });
export const DEFAULT_SWEEPER = Object.freeze({ interval_seconds: 10, batch_size: 100 });

/** What retention keeps, and how it deletes; also the policy of a `leasehold --db` run that has no config. */
export const DEFAULT_RETENTION = Object.freeze({
  succeeded_days: 30,
  failed_days: 90,
  cancelled_days: 30,
  batch_size: 5000,
  interval_seconds: 300,
});

/** The host a listening port binds by default (the supervisor's `http`, `leasehold dashboard`): loopback only. */
export const DEFAULT_HTTP = Object.freeze({ host: '127.0.0.1', dashboard: false });
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 30;
/**
 * How long one PostgreSQL statement may run (its lock waits included) before
 * the server cancels it: far above any statement leasehold runs, which are
 * short by design, and low enough that a stuck one does not hold a worker,
 * the sweeper or the scheduler for long.
 */
export const DEFAULT_STATEMENT_TIMEOUT_SECONDS = 30;
export const DEFAULT_PAYLOAD_LIMIT_BYTES = 1024 * 1024;
export const DEFAULT_RESULT_LIMIT_BYTES = 1024 * 1024;

export const DEFAULT_MAX_RETRIES = 5;
export const MAX_PRIORITY = 1_000_000;
/** A job's priority when its enqueue (or its schedule) sets none. */
export const DEFAULT_PRIORITY = 0;

/** A class's settings but those with a section or a rule of their own below. */
export const DEFAULT_CLASS = Object.freeze({
  processes: 1,
  concurrency: 1,
  lease_seconds: 30,
  max_runtime_seconds: 300,
  kill_grace_seconds: 5,
  max_memory_mb: 512,
  poll_seconds: 0.5,
});

/** A class's heartbeat, by default: a third of its lease, at most 10 s. */
export function defaultHeartbeatSeconds(leaseSeconds: number): number {
  return Math.min(10, leaseSeconds / 3);
}

export const DEFAULT_BACKOFF = Object.freeze({ base_seconds: 1, max_seconds: 300, jitter: true });

/** A class's crash-loop limit: more than max_restarts crashes within within_seconds. */
export const DEFAULT_RESTART = Object.freeze({ max_restarts: 5, within_seconds: 60 });

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

/** A schedule's settings (its jobs' priority: DEFAULT_PRIORITY). */
export const DEFAULT_SCHEDULE = Object.freeze({ timezone: 'UTC', payload: {}, catch_up: 'latest' });
