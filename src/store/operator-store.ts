/** The Store's role for operators' commands, reports and the dashboard (the rows it reads: read-rows.ts). */
import type {
  BulkBounds,
  CancelOutcome,
  FailedFilter,
  JobRow,
  PauseOutcome,
  RateLimit,
  ResumeOutcome,
  RetryOutcome,
  WorkerRow,
} from './data.js';
import type { ProducerStore } from './producer-store.js';
import type {
  ChildCrash,
  ClassControl,
  ClassErrorCount,
  ClassOldestDue,
  ClassStatusCount,
  CostRanking,
  DatabaseSize,
  DisabledClass,
  ErrorCount,
  FinishedMinute,
  InFlightJob,
  RateWindow,
  RetryBucket,
  StatusCount,
} from './read-rows.js';

/** The operator's commands and reports. */
export interface OperatorStore extends ProducerStore {
  /** Create or upgrade the schema. Safe when several processes run it at once. */
  migrate(): Promise<void>;
  jobCancel(params: { id: number; actor: string }): Promise<CancelOutcome>;
  jobRetry(params: { id: number; actor: string }): Promise<RetryOutcome>;
  /** The FAILED jobs of a filter run once more, within the bounds, in transactions of BULK_BATCH jobs; returns how many. */
  jobRetryFailed(params: FailedFilter & BulkBounds & { actor: string }): Promise<number>;
  /** The QUEUED jobs (of a class) are cancelled, within the bounds, in transactions of BULK_BATCH jobs; returns how many. */
  jobCancelQueued(params: { class?: string; actor: string } & BulkBounds): Promise<number>;
  /** How many FAILED jobs `jobRetryFailed` with this filter would queue now. */
  jobCountFailed(params: FailedFilter): Promise<number>;
  /** How many jobs wait or waited for this one (jobChildren reads them, a page at a time). */
  jobChildCount(params: { id: number }): Promise<number>;
  /** Jobs enqueued with this idempotency key (unique within a class: one per class at most), newest first. */
  jobListByKey(params: { key: string; class?: string }): Promise<JobRow[]>;
  workerList(params: { includeExited: boolean; limit: number }): Promise<WorkerRow[]>;
  /** Claims of the class stop on every host until it is resumed (jobs running go on); recorded with the actor. */
  classPause(params: { class: string; actor: string }): Promise<PauseOutcome>;
  classResume(params: { class: string; actor: string }): Promise<ResumeOutcome>;
  classControlList(): Promise<ClassControl[]>;
  classRateWindow(params: { class: string; rateLimit: RateLimit }): Promise<RateWindow>;
  statsCounts(): Promise<ClassStatusCount[]>;
  statsOldestDue(params: { now: number }): Promise<ClassOldestDue[]>;
  /** Held jobs, held longest first, with their owner's pid from the worker registry. */
  statsInFlight(params: { limit: number }): Promise<InFlightJob[]>;
  /** Jobs that ended SUCCEEDED or FAILED at or after `since`, by class, status and attempts spent. */
  statsRetries(params: { since: number }): Promise<RetryBucket[]>;
  /** Error codes of attempts that ended at or after `since`, most frequent first (LEASE:RELEASED is not an error). */
  statsTopErrors(params: { since: number; limit: number }): Promise<ErrorCount[]>;
  /** The same, the top `limit` within each class. */
  statsTopErrorsByClass(params: { since: number; limit: number }): Promise<ClassErrorCount[]>;
  /**
   * What the attempts that ended at or after `since` cost, of those measured:
   * per class (most CPU first), and the `limit` attempts that used the most
   * CPU and the most memory.
   */
  statsCost(params: { since: number; limit: number }): Promise<CostRanking>;
  /** Jobs that reached each terminal status at or after `since` (throughput). */
  statsFinishedSince(params: { since: number }): Promise<StatusCount[]>;
  /** SUCCEEDED and FAILED jobs per minute that finished in [since, until); minutes with none are absent. */
  statsFinishedByMinute(params: { since: number; until: number }): Promise<FinishedMinute[]>;
  /** Classes disabled by supervisors still alive (registry heartbeat at or after `liveSince`, not exited). */
  classDisabledList(params: { liveSince: number }): Promise<DisabledClass[]>;
  /** Children of supervisors still alive that ended abnormally at or after `since`, newest first. */
  workerCrashList(params: { since: number; liveSince: number; limit: number }): Promise<ChildCrash[]>;
  databaseSize(): Promise<DatabaseSize>;
  /** The highest schema migration applied. */
  schemaVersion(): Promise<number>;
}
