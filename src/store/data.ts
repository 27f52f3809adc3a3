/** The data the store reads and writes: rows, new jobs, claims, outcomes and their parameters. A leaf: it imports one type from a leaf below. */
import type { RetryDelay } from '../backoff.js';

export const JOB_STATUSES = ['WAITING', 'QUEUED', 'CLAIMED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const TERMINAL_STATUSES = ['SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

export type AttemptStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

export type JobEventName =
  | 'ENQUEUED'
  | 'CLAIMED'
  | 'STARTED'
  | 'SUCCEEDED'
  | 'FAILED'
  | 'RETRY_SCHEDULED'
  | 'RECOVERED'
  | 'TIMED_OUT'
  | 'KILLED'
  | 'CANCELLED'
  | 'RELEASED'
  | 'DEPENDENCIES_MET'
  | 'REVIVED'
  | 'ZOMBIE_WRITE_REJECTED';

export interface JobRow {
  id: number;
  class: string;
  status: JobStatus;
  priority: number;
  payload: string;
  result: string | null;
  created_at: number;
  run_at: number;
  claimed_at: number | null;
  started_at: number | null;
  heartbeat_at: number | null;
  lease_expires_at: number | null;
  finished_at: number | null;
  owner_id: string | null;
  lease_token: string | null;
  attempts: number;
  max_retries: number;
  /** 1: its enqueue set no max_retries, so each claim writes its class's (the claiming child's config) into max_retries; 0: the enqueue's own. */
  max_retries_from_class: number;
  /** Attempts handed back at shutdown: they do not count against max_retries. */
  releases: number;
  cancel_requested_at: number | null;
  error_code: string | null;
  error_detail: string | null;
  idempotency_key: string | null;
  progress: string | null;
  /** Its parents that have not ended yet: 0 once it no longer waits. */
  pending_parents: number;
  /** What a parent's failure or cancellation does to this job (while it waits): `cancel` it, or `run` it anyway. */
  on_parent_failure: OnParentFailure;
  /** When its idempotency key is free again: `row` while this row lives, `incomplete` once the job has ended. */
  key_scope: KeyScope;
  /** The key is also free again from this time (epoch ms); null: no lifetime. */
  key_expires_at: number | null;
}

export interface AttemptRow {
  job_id: number;
  attempt: number;
  owner_id: string;
  lease_token: string;
  started_at: number;
  finished_at: number | null;
  status: AttemptStatus;
  error_code: string | null;
  error_detail: string | null;
  /** Why it failed, in full: the thrown error's stack with its cause chain, or what a dead child said last; capped at 8 KiB. */
  error_stack: string | null;
  /** What the attempt cost its child (AttemptCost); null when nobody measured it. */
  cpu_ms: number | null;
  peak_rss_bytes: number | null;
}

/**
 * What one attempt cost the child process that ran it: CPU time (user +
 * system, ms) from the handler's start to its end, and the highest resident
 * set size seen meanwhile. The figures are the process's: with `concurrency`
 * above 1 they include what the jobs running beside it used.
 */
export interface AttemptCost {
  cpuMs: number;
  peakRssBytes: number;
}

/** One line a handler wrote with ctx.log while its attempt ran; `fields` is JSON, or null when it gave none. */
export interface JobLogLine {
  ts: number;
  level: string;
  msg: string;
  fields: string | null;
}

/** An attempt's own log lines, the last ones kept within the cap, and how many earlier ones the cap dropped. */
export interface AttemptLogs {
  lines: JobLogLine[];
  dropped: number;
}

/** A stored log line of a job's attempt; seq orders an attempt's lines. */
export interface JobLogRow {
  job_id: number;
  attempt: number;
  seq: number;
  ts: number;
  level: string;
  message: string;
  fields: string | null;
}

export interface EventRow {
  id: number;
  job_id: number;
  ts: number;
  event: JobEventName;
  actor: string | null;
  detail: string | null;
}

export type WorkerKind = 'supervisor' | 'child';
/** `killed`: ended by its supervisor (runtime, memory, silence, or a drain past its grace), whatever its exit code says. */
export type WorkerState = 'starting' | 'ready' | 'busy' | 'stopping' | 'exited' | 'killed' | 'failed';

export interface WorkerRow {
  id: string;
  kind: WorkerKind;
  host: string;
  supervisor_id: string | null;
  pid: number;
  class: string | null;
  state: WorkerState;
  started_at: number;
  heartbeat_at: number;
  exited_at: number | null;
  exit_code: number | null;
  exit_signal: string | null;
  restarts: number;
  /** Last sample of the process's CPU use (percent of one core) and resident memory. */
  cpu_percent: number | null;
  memory_bytes: number | null;
  /** The job it is running, as its supervisor last saw. */
  job_id: number | null;
}

/** A job as the producer gives it, validated and serialised; `traceparent`: the trace its enqueue ran in (migration 14). */
export interface NewJob {
  class: string;
  payload: string;
  priority: number;
  runAt: number;
  /**
   * The enqueue's own max_retries; with maxRetriesFromClass, the schema's
   * default until a claim writes the class's (what a worker that predates
   * the flag would apply).
   */
  maxRetries: number;
  /** The enqueue set no max_retries: every claim writes its class's. */
  maxRetriesFromClass: boolean;
  idempotencyKey: string | null;
  /** When the key is free again: `row` (default) while this row lives, `incomplete` once the job has ended. */
  keyScope?: KeyScope;
  /** The key is also free again from this time (epoch ms). */
  keyExpiresAt?: number | null;
  /** What a parent's failure or cancellation does to this job: `cancel` it (default), or `run` it anyway. */
  onParentFailure?: OnParentFailure;
  /** Parents that exist already, by id. */
  parentIds?: readonly number[];
  /** Parents earlier in the same batch, by position (0-based). */
  parentIndexes?: readonly number[];
  traceparent?: string | null;
}

/** A job's parent or child in a flow, as `show` and `ctx.parents()` see it. */
export interface RelatedJob {
  id: number;
  class: string;
  status: JobStatus;
  /** JSON text, or null. */
  result: string | null;
  error_code: string | null;
}

export const KEY_SCOPES = ['row', 'incomplete'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];
export const ON_PARENT_FAILURE = ['cancel', 'run'] as const;
export type OnParentFailure = (typeof ON_PARENT_FAILURE)[number];

export interface InsertedJob {
  id: number;
  /** False when the idempotency key matched an existing job, whose id is returned. */
  created: boolean;
}

/** What a claim fixed about its job (the timeline's claim trail): fixed while its token is held, so a holder passing it spares a read. */
export interface ClaimRecord {
  attempt: number;
  ownerId: string;
  claimedAt: number;
}

/** What a worker gets from a claim: everything it needs to run and to fence its writes. */
export interface ClaimedJob extends ClaimRecord, Required<Pick<NewJob, 'traceparent'>> {
  id: number;
  class: string;
  payload: string;
  priority: number;
  maxRetries: number;
  leaseToken: string;
  leaseExpiresAt: number;
  createdAt: number;
}

/** The identity a fenced write carries. */
export interface LeaseRef {
  id: number;
  leaseToken: string;
}

export interface FailureInput {
  code: string;
  detail: string;
  /** False skips the remaining retries. */
  retryable: boolean;
  /** The error's stack with its cause chain (capped), kept in the attempt's row; none for a value that is not an Error. */
  stack?: string;
}

/** What a worker decided about a job it ran. */
export type Verdict =
  | { type: 'complete'; result: string | null }
  | { type: 'fail'; error: FailureInput; retryDelayMs: number }
  | { type: 'release'; reason: string };

export type JobStartParams = LeaseRef & { leaseMs: number; startedAt?: number; claim?: ClaimRecord };

/** One job's outcome for jobsSettle, fenced by its lease. */
export interface Settlement extends LeaseRef {
  /**
   * When the handler really started, if that was not written yet (a short
   * job's start is written with its outcome); null when jobStart wrote it.
   */
  startedAt: number | null;
  verdict: Verdict;
  /** What the attempt cost, as its child measured it; written with the outcome (none: a job handed back before it began). */
  cost?: AttemptCost;
  /** The holder's record of its claim: with it, a batch of successes is written without reading the rows first. */
  claim?: ClaimRecord;
  /** The lines the handler logged during the attempt; written with the outcome, in the same transaction. */
  logs?: AttemptLogs;
}

/** A failed attempt's place in its job's retries: run `run` of the `of` it may have, and the rule that sent the job where it went. */
export interface RetryAccount {
  run: number;
  of: number;
  rule: 'retries left' | 'no retries left' | 'not retryable' | 'cancel requested';
}

export type SettleResult =
  | {
      id: number;
      held: true;
      status: 'SUCCEEDED' | 'QUEUED' | 'FAILED' | 'CANCELLED';
      runAt: number | null;
      retry?: RetryAccount;
    }
  | { id: number; held: false };

/** At most `max` claims of a class granted in any window of `perMs`, by every claimer of the database together. */
export interface RateLimit {
  max: number;
  perMs: number;
}

export interface ClaimRequest {
  classes: string[];
  ownerId: string;
  limit: number;
  leaseMs: number;
  /** The claimer's class max_retries (config `max_retries`), written on each claimed job whose enqueue set none (on every class of a claim of several). */
  classMaxRetries: number;
  /** The class's rate limit (config `rate_limit`); only in a claim of one class, as a child makes for its own. */
  rateLimit?: RateLimit;
}

/** A heartbeat's answer for one lease. */
export type LeaseStatus =
  { id: number; held: true; leaseExpiresAt: number; cancelRequested: boolean } | { id: number; held: false };

export type { RetryDelay };

/** One job taken back from a worker that lost it: what happened to it and why; its claim and trace, for its span. */
export interface RecoveredJob extends Required<Pick<NewJob, 'traceparent'>>, Pick<ClaimRecord, 'claimedAt'> {
  id: number;
  class: string;
  attempt: number;
  ownerId: string | null;
  leaseToken: string;
  /** Where the job went: QUEUED again, FAILED for good, CANCELLED (cancel was requested). */
  status: 'QUEUED' | 'FAILED' | 'CANCELLED';
  runAt: number | null;
  /** True when the job went back without spending a retry: only claimed, never started, or released on purpose. */
  released: boolean;
  /** Its holder had begun the attempt (RUNNING), as opposed to only claiming it. */
  begun: boolean;
  /** Where the attempt leaves its job's retries; absent when it went back free. */
  retry?: RetryAccount;
}

export interface RecoverParams {
  errorCode: string;
  errorDetail: string;
  event: 'RECOVERED' | 'KILLED' | 'TIMED_OUT';
  actor: string;
  retryDelay: RetryDelay;
  /** False fails the job for good whatever its retries (a poison job). Default true. */
  retryable?: boolean;
  /** The full story, for the attempts this take-back ends (a dead child's last words); error_detail stays short. */
  errorStack?: string;
}

/** A take-back of everything one owner holds (see SupervisorStore.leasesRecoverByOwner). */
export interface OwnerRecovery extends RecoverParams {
  ownerId: string;
  culpritJobId?: number;
  culpritCost?: AttemptCost;
}

export type PauseOutcome = 'paused' | 'already_paused';
export type ResumeOutcome = 'resumed' | 'not_paused';

export type CancelOutcome = 'cancelled' | 'cancel_requested' | 'already_requested' | 'terminal' | 'not_found';
export type RetryOutcome = 'queued' | 'not_failed' | 'not_found';

export interface JobListFilter {
  status?: JobStatus;
  class?: string;
  /** FAILED jobs that ended with this error code (with another `status`, nothing matches). */
  errorCode?: string;
  /** Keyset pagination: only jobs with a smaller id. */
  beforeId?: number;
  limit: number;
}

/** Which FAILED jobs a bulk retry takes (and its count counts): all, or those of a class, of an error code, or both. */
export interface FailedFilter {
  class?: string;
  errorCode?: string;
}

/**
 * How far a bulk action reaches: jobs up to `throughId` (the newest a
 * confirmation counted), `limit` at most (its count). Jobs that came after
 * are left alone. Without them: every job that matches.
 */
export interface BulkBounds {
  throughId?: number;
  limit?: number;
}

export interface WorkerRegistration {
  id: string;
  kind: WorkerKind;
  host: string;
  supervisorId: string | null;
  pid: number;
  class: string | null;
  state: WorkerState;
  restarts: number;
}

export interface WorkerHeartbeat {
  id: string;
  state?: WorkerState;
  cpuPercent?: number | null;
  memoryBytes?: number | null;
  jobId?: number | null;
}

/** A worker's end: its code or signal (both null when a later supervisor found it gone). */
export interface WorkerExit {
  id: string;
  state: WorkerState;
  exitCode: number | null;
  exitSignal: string | null;
}

/** What every role shares: the driver's name and the end of the connection. */
export interface Connection {
  readonly driver: 'sqlite' | 'postgres';
  /** The store's time, epoch ms: its statements' now, and what a time read from it (an expiry, a run_at) is compared with. */
  readonly clock: { now(): number };
  close(): Promise<void>;
}
