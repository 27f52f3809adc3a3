/**
 * The typed messages between the supervisor and its child workers, one union
 * per direction. Errors cross as ErrorSummary and are rebuilt with
 * reviveError, so `retryable` survives the trip.
 */
import type { ClassConfig } from '../config/schema.js';
import type { LogLevel } from '../limits.js';
import { CLEAN_EXIT_CODE } from '../crash-loop.js';
import type { ErrorSummary } from '../errors.js';
import type { DbFaultKind, DbOutage } from '../store/faults.js';
import type { AttemptCost, RetryAccount } from '../store/types.js';
import type { BucketCounts } from './buckets.js';

/**
 * Everything a child needs, resolved by the supervisor: the child never reads
 * queue.yaml, so the limits it applies are the ones the supervisor enforces.
 */
export interface ChildStart {
  type: 'start';
  workerId: string;
  database: string;
  /** PostgreSQL's statement_timeout for the child's connections (statement_timeout_seconds). */
  statementTimeoutMs: number;
  resultLimitBytes: number;
  config: ClassConfig;
  /** The flight recorder file (flight-record.ts) with one record per slot, made by the supervisor. */
  flightRecord: string;
  /** Whether the supervisor logs each success (at debug): then the child's success tallies carry each job. */
  successLines: boolean;
  /** SQLite: the Unix socket of the supervisor's writer, which makes the child's writes (writer-protocol.ts); null: it writes itself. */
  writer: string | null;
}

export type SupervisorToChild =
  /** The first message, and only once. */
  | ChildStart
  /**
   * Stop claiming, finish the jobs in hand, hand back what was only claimed,
   * tear the handler down within what is left of `graceMs`, exit 0.
   */
  | { type: 'drain'; graceMs: number }
  /** Abort the jobs in hand now and hand them back without spending a retry, then exit 0. */
  | { type: 'stop'; reason: string }
  /** Jobs of your class are due now (taken back from a dead worker, say): stop idling and claim. */
  | { type: 'wake' }
  /** Are you there? Answered with a pong at once: liveness, without the database. */
  | { type: 'ping' }
  /** A reload changed the log level: whether to send each success in full from now on (ChildStart's successLines). */
  | { type: 'success-lines'; on: boolean };

/** How a job left a child's hands. */
export type JobOutcome = 'SUCCEEDED' | 'QUEUED' | 'FAILED' | 'CANCELLED' | 'RELEASED' | 'LEASE_LOST';

/** A job that left a child's hands; with the attempt's cost (cpuMs, peakRssBytes) when its handler ran and its outcome was written. */
export interface FinishedJob extends Partial<AttemptCost> {
  jobId: number;
  attempt: number;
  outcome: JobOutcome;
  durationMs: number;
  error?: ErrorSummary;
  /** For a failed attempt: its place in the job's retries, and the rule that decided where the job went. */
  retry?: RetryAccount;
  /** The trace the job was enqueued in, for the supervisor's line about it. */
  trace_id?: string;
}

/** The successes a child wrote since it last said. */
export interface SuccessTally {
  count: number;
  /** Their durations, in seconds, in DURATION_BUCKETS (buckets.ts). */
  durationSeconds: BucketCounts;
  /** Of those whose cost was measured: CPU time summed, and peak resident sets in PEAK_RSS_BUCKETS (their count is how many). */
  cpuMs: number;
  peakRssBytes: BucketCounts;
  /**
   * The ids of those that succeeded after a first attempt: only such a job
   * can have crashed a child before, so only its success can clear a crash
   * count at the supervisor (take-back.ts).
   */
  retriedJobIds: number[];
  /** Each one in full, only while the supervisor logs at debug (its JOB_SUCCEEDED lines). */
  jobs?: FinishedJob[];
}

export type ChildToSupervisor =
  /** Handler loaded and store open: the child is healthy and claiming. */
  | { type: 'ready' }
  /** The child could not start (handler missing or broken, store unreachable); it exits next. */
  | { type: 'startup-failed'; error: ErrorSummary }
  /** How many jobs it started since it last said (at most once a second: the starts themselves are in the flight recorder). */
  | { type: 'jobs-started'; count: number }
  /** The outcomes but successes a child just wrote, one message per write (outcomes are written in batches), and each lease it lost. */
  | { type: 'jobs-finished'; jobs: FinishedJob[] }
  /** The successes it wrote since it last said: at most once a second, at once when one clears a crash count, and before it exits. */
  | { type: 'jobs-succeeded'; tally: SuccessTally }
  | { type: 'pong' }
  /** An operation failed because the database is away (for leasehold_db_errors_total). */
  | { type: 'db-error'; kind: DbFaultKind }
  /** The child's database outage began (with what it saw first) or ended (null). */
  | { type: 'db-outage'; outage: DbOutage | null }
  /** What a dying child says last: the error nobody caught, which ends it (the supervisor keeps it for the job it blames). */
  | {
      type: 'last-words';
      origin: 'uncaughtException' | 'unhandledRejection';
      error: ErrorSummary;
      stack: string | null;
    }
  /** A structured log line from the child or from a handler's ctx.log. */
  | { type: 'log'; level: LogLevel; msg: string; fields: Record<string, unknown> };

/** Exit codes a child uses on purpose; anything else is a crash. */
export const CHILD_EXIT = {
  /** Drained or stopped cleanly. */
  OK: CLEAN_EXIT_CODE,
  /** Could not load its handler or open the store: restarting will not help. */
  STARTUP_FAILED: 78,
  /** Its supervisor is gone. */
  ORPHANED: 79,
} as const;

export function isChildToSupervisor(value: unknown): value is ChildToSupervisor {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

export function isSupervisorToChild(value: unknown): value is SupervisorToChild {
  const type = (value as { type?: unknown } | null)?.type;
  return (
    type === 'start' ||
    type === 'drain' ||
    type === 'stop' ||
    type === 'wake' ||
    type === 'ping' ||
    type === 'success-lines'
  );
}
