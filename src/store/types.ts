/** The Store's roles, one interface each (the schedules' role: ./schedules.ts; the operator's: ./operator-store.ts, its reads: read-rows.ts), and, re-exported, the data they exchange (./data.ts). */
import type { SchedulerStore } from './schedules.js';
import type { OperatorStore } from './operator-store.js';
import type { ClassControl, ClassOldestDue, ClassStatusCount, RateWindow } from './read-rows.js';
export type { OperatorStore } from './operator-store.js';
export type {
  ClassPause,
  ClassControl,
  RateWindow,
  ClassOldestDue,
  ClassStatusCount,
  StatusCount,
  InFlightJob,
  RetryBucket,
  ErrorCount,
  ClassErrorCount,
  DatabaseSize,
} from './read-rows.js';
export type { ChildCrash, DisabledClass, FinishedMinute } from './read-rows.js';
export type { ClassCost, AttemptCostRow, CostRanking } from './read-rows.js';
import type { ProducerStore } from './producer-store.js';
import type { WakeWatch } from './wake-watch.js';
import type {
  ClaimedJob,
  ClaimRequest,
  Connection,
  JobRow,
  JobStartParams,
  LeaseRef,
  LeaseStatus,
  OwnerRecovery,
  RateLimit,
  RelatedJob,
  RecoveredJob,
  RecoverParams,
} from './data.js';
import type {
  SettleResult,
  Settlement,
  TerminalStatus,
  WorkerExit,
  WorkerHeartbeat,
  WorkerRegistration,
  WorkerRow,
} from './data.js';
export type * from './data.js';
export { JOB_STATUSES, KEY_SCOPES, ON_PARENT_FAILURE, TERMINAL_STATUSES } from './data.js';
export type { ProducerStore } from './producer-store.js';

/** A child worker: claim with the outcomes it settles, then fenced writes about the jobs it holds. */
export interface WorkerStore extends Connection {
  /**
   * Write several outcomes, then (optionally) claim the next batch, in one
   * transaction: the worker's hot path. Each settlement is fenced on its own;
   * a stale one is reported (held: false) and recorded, never thrown.
   */
  jobsSettle(params: {
    settlements: Settlement[];
    claim?: ClaimRequest;
  }): Promise<{ settled: SettleResult[]; claimed: ClaimedJob[] }>;
  /** The jobs a job waited for, by id, with their results: a handler's ctx.parents(). */
  jobParents(params: { id: number }): Promise<RelatedJob[]>;
  /** CLAIMED -> RUNNING; `startedAt` is when the handler really started (default: now); `claim` spares a read. */
  jobStart(params: JobStartParams): Promise<void>;
  /** One heartbeat for every lease a worker holds: one transaction, a status per lease, nothing thrown for lost ones. */
  leasesExtend(params: { leases: LeaseRef[]; leaseMs: number }): Promise<LeaseStatus[]>;
  jobProgress(params: LeaseRef & { progress: string }): Promise<void>;
  /**
   * Wake-ups (PostgreSQL: LISTEN/NOTIFY; SQLite: a watch on its WAL file,
   * which fires on any commit, whatever the class): `onJob` runs soon after a
   * job of one of `classes` is enqueued or retried by an operator, once that
   * transaction commits. A hint, not a delivery: claim as usual, and keep a
   * slow poll, since notifications sent while the listening connection was
   * down are lost. When that connection breaks, `onError` hears why and
   * `onJob` runs once more; PostgreSQL then listens again with backoff (each
   * failed attempt goes to `onError`) and runs `onJob` once it does. Resolves
   * once listening. On SQLite a wake-up ends the watch until `rearm()`: a
   * busy worker is not woken by every commit of its siblings.
   */
  subscribe?(classes: string[], onJob: () => void, onError?: (error: Error) => void): Promise<WakeWatch>;
}

/** A supervisor: its children's leases, the worker registry, its health checks. */
export interface SupervisorStore extends Connection {
  /** The jobs one owner holds now, with their lease data: what the supervisor's health watch reads. */
  jobListHeldBy(params: { ownerId: string }): Promise<JobRow[]>;
  /**
   * Take back every job an owner holds (each spends a retry: see planRecovery).
   * `culpritJobId`: the job the owner was killed for; its other jobs go back
   * without spending a retry. `culpritCost`: what the culprit's attempt cost,
   * as the supervisor sampled its child, written on that attempt alone.
   */
  leasesRecoverByOwner(params: OwnerRecovery): Promise<RecoveredJob[]>;
  /** Hand every job an owner holds back to the queue without spending a retry (shutdown). */
  leasesReleaseByOwner(params: { ownerId: string; actor: string; reason: string }): Promise<RecoveredJob[]>;
  workerRegister(params: WorkerRegistration): Promise<void>;
  workerHeartbeat(params: WorkerHeartbeat): Promise<void>;
  workerExit(params: WorkerExit): Promise<void>;
  workerList(params: { includeExited: boolean; limit: number }): Promise<WorkerRow[]>;
  /** Workers recorded alive on a host: a new supervisor checks which of them are really gone. */
  workerListLiveOnHost(params: { host: string }): Promise<WorkerRow[]>;
  /** Jobs per class and status (pairs with no job are absent): /metrics, and `stats`. */
  statsCounts(): Promise<ClassStatusCount[]>;
  /** Each class with jobs due now (QUEUED, run_at <= now) and the oldest due run_at: how long the queue has waited. */
  statsOldestDue(params: { now: number }): Promise<ClassOldestDue[]>;
  /** ZOMBIE_WRITE_REJECTED events still in the timeline. */
  statsZombieWrites(): Promise<number>;
  /** Every class's control row, by name: paused or not (a paused class claims nothing), and its last pause and resume. */
  classControlList(): Promise<ClassControl[]>;
  /** Where a rate-limited class stands in its window now. */
  classRateWindow(params: { class: string; rateLimit: RateLimit }): Promise<RateWindow>;
  /** This supervisor spawns no more children of the class (replaces its earlier record of that class). */
  classDisabledRecord(params: { supervisorId: string; class: string; reason: string }): Promise<void>;
  /** The class is enabled again (a reload), or with no class every class (the supervisor exits). */
  classDisabledClear(params: { supervisorId: string; class?: string }): Promise<void>;
  /** A trivial query: throws when the database does not answer. */
  ping(): Promise<void>;
  /** SQLite only: move the file's shared timeline one bounded step towards this host's wall clock (sqlite/file-clock.ts). */
  clockFollowWall?(): Promise<void>;
  /** PostgreSQL only: an extra margin the sweeper waits past a lease's end (`clock_skew_ms`). */
  readonly clockSkewMs?: number;
}

/** The sweeper and retention, whoever runs them (the supervisor on a schedule, `leasehold sweep` / `prune` once). */
export interface MaintenanceStore extends Connection {
  leasesRecoverExpired(params: RecoverParams & { limit: number }): Promise<RecoveredJob[]>;
  /** Jobs of a terminal status that finished before a time: what a prune would delete. */
  jobsPruneCount(params: { status: TerminalStatus; finishedBefore: number }): Promise<number>;
  /** Deletes up to `limit` of them, oldest first, in one short transaction (attempts and events go too); returns how many. */
  jobsPruneBatch(params: { status: TerminalStatus; finishedBefore: number; limit: number }): Promise<number>;
  /** Whole-database checks (page integrity, foreign keys, attempts numbered 1..attempts): the problems found, none when healthy. */
  integrityCheck(): Promise<string[]>;
  /** Sums up to `maxMinutes` more ended minutes into the stats rollup (../stats-window.ts), in one short transaction; how many it summed. */
  statsRollUp(params: { maxMinutes: number }): Promise<number>;
}

/**
 * The only way the rest of leasehold touches a database: one driver class
 * per database implements every role. Each method is one short transaction;
 * a worker's writes about a job it holds are fenced by (id, lease_token,
 * status). Callers ask for the narrowest role they need.
 */
export type Store = ProducerStore & WorkerStore & SupervisorStore & MaintenanceStore & SchedulerStore & OperatorStore;
