import type { Clock } from '../../clock.js';
import { LeaseLostError } from '../../errors.js';
import { eventDetail, statusAfterFailure } from '../policy.js';
import type {
  AttemptRow,
  CancelOutcome,
  ClaimedJob,
  EventRow,
  FailOutcome,
  HeartbeatResult,
  InsertedJob,
  JobEventName,
  JobListFilter,
  JobRow,
  LeaseRef,
  RecoveredJob,
  RecoverParams,
  RetryOutcome,
  Store,
  WorkerRegistration,
  WorkerRow,
  WorkerHeartbeat,
  WorkerState,
  FailureInput,
  NewJob,
} from '../types.js';
import { openSqlite, withBusyRetry, type SqliteDb } from './connection.js';
import { runSqliteMigrations } from './migrations.js';
import { prepareHistoryStatements, type HistoryStatements } from './sql/history.js';
import { prepareJobStatements, type JobStatements } from './sql/jobs.js';
import { prepareLeaseStatements, type LeaseStatements } from './sql/leases.js';
import { prepareWorkerStatements, type WorkerStatements } from './sql/workers.js';

interface HeldFacts {
  id: number;
  class: string;
  status: 'CLAIMED' | 'RUNNING';
  attempts: number;
  releases: number;
  max_retries: number;
  cancel_requested_at: number | null;
  owner_id: string | null;
  lease_token: string;
}

type ClaimedRow = {
  id: number;
  class: string;
  payload: string;
  priority: number;
  run_at: number;
  attempts: number;
  max_retries: number;
  lease_token: string;
  lease_expires_at: number;
  created_at: number;
};

/** A fenced write that matched no row: recorded, then raised outside the transaction so the record commits. */
const LOST = Symbol('lease lost');

export interface SqliteStoreOptions {
  path: string;
  clock: Clock;
}

/**
 * The SQLite driver. better-sqlite3 is synchronous; every write is one
 * IMMEDIATE transaction (the write lock is taken up front, so two writers
 * never deadlock upgrading a read lock), retried on SQLITE_BUSY.
 */
export class SqliteStore implements Store {
  readonly driver = 'sqlite' as const;
  private readonly db: SqliteDb;
  private readonly clock: Clock;
  private readonly jobs: JobStatements;
  private readonly leases: LeaseStatements;
  private readonly history: HistoryStatements;
  private readonly workers: WorkerStatements;
  /** One IMMEDIATE transaction wrapper, built once: `write` runs each operation's body inside it. */
  private readonly transaction: (work: (now: number) => unknown, now: number) => unknown;

  private constructor(db: SqliteDb, clock: Clock) {
    this.db = db;
    this.clock = clock;
    this.jobs = prepareJobStatements(db);
    this.leases = prepareLeaseStatements(db);
    this.history = prepareHistoryStatements(db);
    this.workers = prepareWorkerStatements(db);
    const wrapped = db.transaction((work: (now: number) => unknown, now: number) => work(now));
    this.transaction = (work, now) => wrapped.immediate(work, now);
  }

  /** Open (creating the file and folder if needed), migrate, and prepare every statement once. */
  static async open(options: SqliteStoreOptions): Promise<SqliteStore> {
    const db = openSqlite(options.path);
    try {
      await withBusyRetry(() => runSqliteMigrations(db, options.clock.now()));
      return new SqliteStore(db, options.clock);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** The raw connection, for the query-plan tests and the benchmark's bare-loop ceiling. */
  get connection(): SqliteDb {
    return this.db;
  }

  async migrate(): Promise<void> {
    await withBusyRetry(() => runSqliteMigrations(this.db, this.clock.now()));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  private write<T>(work: (now: number) => T): Promise<T> {
    return withBusyRetry(() => this.transaction(work, this.clock.now()) as T);
  }

  private event(jobId: number, now: number, event: JobEventName, actor: string, detail: Record<string, unknown>): void {
    this.history.eventInsert.run({ jobId, now, event, actor, detail: eventDetail(detail) });
  }

  /** The other half of every fenced write: say in the timeline that a stale holder was turned away. */
  private rejectZombie(ref: LeaseRef, now: number, operation: string): typeof LOST {
    if (this.jobs.exists.get(ref.id) !== undefined) {
      this.event(ref.id, now, 'ZOMBIE_WRITE_REJECTED', 'worker', { op: operation, lease_token: ref.leaseToken });
    }
    return LOST;
  }

  private fenced<T>(ref: LeaseRef, operation: string, outcome: T | typeof LOST): T {
    if (outcome === LOST) throw new LeaseLostError(ref.id, ref.leaseToken, operation);
    return outcome;
  }

  // producers and operators

  async jobInsert(params: { jobs: NewJob[]; actor: string }): Promise<InsertedJob[]> {
    return this.write((now) =>
      params.jobs.map((job) => {
        if (job.idempotencyKey !== null) {
          const existing = this.jobs.findByKey.get(job.class, job.idempotencyKey) as { id: number } | undefined;
          if (existing !== undefined) return { id: existing.id, created: false };
        }
        const { id } = this.jobs.insert.get({ ...job, now }) as { id: number };
        this.event(id, now, 'ENQUEUED', params.actor, { run_at: job.runAt, priority: job.priority });
        return { id, created: true };
      }),
    );
  }

  async jobGet(params: { id: number }): Promise<JobRow | undefined> {
    return this.jobs.get.get(params.id) as JobRow | undefined;
  }

  async jobList(params: JobListFilter): Promise<JobRow[]> {
    const { status, limit } = params;
    const jobClass = params.class;
    const statement =
      status !== undefined && jobClass !== undefined
        ? this.jobs.listByClassStatus
        : status !== undefined
          ? this.jobs.listByStatus
          : jobClass !== undefined
            ? this.jobs.listByClass
            : this.jobs.listAll;
    return statement.all({ status, class: jobClass, limit }) as JobRow[];
  }

  async attemptList(params: { jobId: number }): Promise<AttemptRow[]> {
    return this.history.attemptList.all(params.jobId) as AttemptRow[];
  }

  async eventList(params: { jobId: number }): Promise<EventRow[]> {
    return this.history.eventList.all(params.jobId) as EventRow[];
  }

  async jobCancel(params: { id: number; actor: string }): Promise<CancelOutcome> {
    return this.write((now): CancelOutcome => {
      const job = this.jobs.get.get(params.id) as JobRow | undefined;
      if (job === undefined) return 'not_found';
      if (this.jobs.cancelQueued.run({ id: params.id, now }).changes === 1) {
        this.event(params.id, now, 'CANCELLED', params.actor, { stage: 'done', from: 'QUEUED' });
        return 'cancelled';
      }
      if (this.jobs.requestCancel.run({ id: params.id, now }).changes === 1) {
        this.event(params.id, now, 'CANCELLED', params.actor, { stage: 'requested', owner_id: job.owner_id });
        return 'cancel_requested';
      }
      return job.status === 'CLAIMED' || job.status === 'RUNNING' ? 'already_requested' : 'terminal';
    });
  }

  async jobRetry(params: { id: number; actor: string }): Promise<RetryOutcome> {
    return this.write((now): RetryOutcome => {
      if (this.jobs.retryFailed.run({ id: params.id, now }).changes === 1) {
        this.event(params.id, now, 'RETRY_SCHEDULED', params.actor, { manual: true, run_at: now });
        return 'queued';
      }
      return this.jobs.exists.get(params.id) === undefined ? 'not_found' : 'not_failed';
    });
  }

  async jobRetryFailed(params: { class?: string; actor: string }): Promise<number> {
    return this.write((now) => {
      const rows = (
        params.class === undefined ? this.jobs.retryAllFailed.all({ now }) : this.jobs.retryClassFailed.all({ now, class: params.class })
      ) as { id: number }[];
      for (const { id } of rows) this.event(id, now, 'RETRY_SCHEDULED', params.actor, { manual: true, run_at: now });
      return rows.length;
    });
  }

  async jobDelete(params: { id: number }): Promise<boolean> {
    return this.write(() => this.jobs.delete.run(params.id).changes === 1);
  }

  // workers

  async jobClaim(params: { classes: string[]; ownerId: string; limit: number; leaseMs: number }): Promise<ClaimedJob[]> {
    if (params.classes.length === 0 || params.limit < 1) return [];
    const rows = await this.write((now) => {
      const bind = { ownerId: params.ownerId, now, leaseExpiresAt: now + params.leaseMs, limit: params.limit };
      const claimed = (
        params.classes.length === 1
          ? this.leases.claimOneClass.all({ ...bind, class: params.classes[0] })
          : this.leases.claimManyClasses.all({ ...bind, classes: JSON.stringify(params.classes) })
      ) as ClaimedRow[];
      for (const row of claimed) {
        this.history.attemptInsert.run({ jobId: row.id, attempt: row.attempts, ownerId: params.ownerId, leaseToken: row.lease_token, now });
        this.event(row.id, now, 'CLAIMED', params.ownerId, { attempt: row.attempts });
      }
      return claimed;
    });
    // RETURNING does not promise an order: hand the batch over in claim order.
    rows.sort((a, b) => b.priority - a.priority || a.run_at - b.run_at || a.id - b.id);
    return rows.map((row) => ({
      id: row.id,
      class: row.class,
      payload: row.payload,
      priority: row.priority,
      attempt: row.attempts,
      maxRetries: row.max_retries,
      leaseToken: row.lease_token,
      leaseExpiresAt: row.lease_expires_at,
      createdAt: row.created_at,
    }));
  }

  async jobStart(params: LeaseRef & { leaseMs: number }): Promise<void> {
    const outcome = await this.write((now) => {
      const row = this.leases.start.get({ ...params, now, leaseExpiresAt: now + params.leaseMs }) as { attempts: number } | undefined;
      if (row === undefined) return this.rejectZombie(params, now, 'start');
      this.event(params.id, now, 'STARTED', 'worker', { attempt: row.attempts });
      return undefined;
    });
    this.fenced(params, 'start', outcome);
  }

  async leaseExtend(params: LeaseRef & { leaseMs: number }): Promise<HeartbeatResult> {
    const outcome = await this.write((now) => {
      const row = this.leases.extend.get({ ...params, now, leaseExpiresAt: now + params.leaseMs }) as
        | { lease_expires_at: number; cancel_requested_at: number | null }
        | undefined;
      if (row === undefined) return this.rejectZombie(params, now, 'heartbeat');
      return { leaseExpiresAt: row.lease_expires_at, cancelRequested: row.cancel_requested_at !== null };
    });
    return this.fenced(params, 'heartbeat', outcome);
  }

  async jobProgress(params: LeaseRef & { progress: string }): Promise<void> {
    const outcome = await this.write((now) =>
      this.leases.progress.run(params).changes === 1 ? undefined : this.rejectZombie(params, now, 'progress'),
    );
    this.fenced(params, 'progress', outcome);
  }

  async jobCompleteIfHeld(params: LeaseRef & { result: string | null }): Promise<void> {
    const outcome = await this.write((now) => {
      const row = this.leases.complete.get({ ...params, now }) as { attempts: number } | undefined;
      if (row === undefined) return this.rejectZombie(params, now, 'complete');
      this.finishAttempt(params, row.attempts, now, 'SUCCEEDED', null, null);
      this.event(params.id, now, 'SUCCEEDED', 'worker', { attempt: row.attempts });
      return undefined;
    });
    this.fenced(params, 'complete', outcome);
  }

  async jobFailIfHeld(params: LeaseRef & { error: FailureInput; retryDelayMs: number }): Promise<FailOutcome> {
    const outcome = await this.write((now): FailOutcome | typeof LOST => {
      const facts = this.leases.heldFacts.get(params) as Omit<HeldFacts, 'id' | 'status' | 'owner_id' | 'lease_token'> | undefined;
      if (facts === undefined) return this.rejectZombie(params, now, 'fail');
      const status = this.settleFailure(params, facts, now, params.error, 'FAILED', now + params.retryDelayMs);
      this.event(params.id, now, outcomeEvent(status), 'worker', {
        attempt: facts.attempts,
        code: params.error.code,
        detail: params.error.detail,
        ...(status === 'QUEUED' ? { run_at: now + params.retryDelayMs } : {}),
      });
      return status === 'QUEUED' ? { status, runAt: now + params.retryDelayMs } : { status };
    });
    return this.fenced(params, 'fail', outcome);
  }

  async jobReleaseIfHeld(params: LeaseRef & { reason: string }): Promise<void> {
    const outcome = await this.write((now) => {
      const facts = this.leases.heldFacts.get(params) as { attempts: number } | undefined;
      if (facts === undefined) return this.rejectZombie(params, now, 'release');
      this.releaseHeld(params, facts.attempts, now, 'worker', params.reason);
      return undefined;
    });
    this.fenced(params, 'release', outcome);
  }

  /**
   * Ends a held job's attempt badly and moves the job on: requeued with a
   * retry delay, or FAILED / CANCELLED for good. The caller has read `facts`
   * in this same transaction.
   */
  private settleFailure(
    ref: LeaseRef,
    facts: Pick<HeldFacts, 'attempts' | 'releases' | 'max_retries' | 'cancel_requested_at'>,
    now: number,
    error: FailureInput,
    attemptStatus: 'FAILED' | 'CANCELLED',
    runAt: number,
  ): 'QUEUED' | 'FAILED' | 'CANCELLED' {
    const status = statusAfterFailure(
      { attempts: facts.attempts, releases: facts.releases, maxRetries: facts.max_retries, cancelRequested: facts.cancel_requested_at !== null },
      error,
    );
    const bind = { ...ref, now, code: error.code, detail: error.detail };
    if (status === 'QUEUED') this.leases.requeue.run({ ...bind, runAt });
    else this.leases.finishBadly.run({ ...bind, status });
    this.finishAttempt(ref, facts.attempts, now, status === 'CANCELLED' ? 'CANCELLED' : attemptStatus, error.code, error.detail);
    return status;
  }

  private releaseHeld(ref: LeaseRef, attempt: number, now: number, actor: string, reason: string): void {
    this.leases.release.run({ ...ref, now });
    this.finishAttempt(ref, attempt, now, 'CANCELLED', 'LEASE:RELEASED', reason);
    this.event(ref.id, now, 'RELEASED', actor, { attempt, reason });
  }

  private finishAttempt(
    ref: LeaseRef,
    attempt: number,
    now: number,
    status: AttemptRow['status'],
    code: string | null,
    detail: string | null,
  ): void {
    this.history.attemptFinish.run({ jobId: ref.id, attempt, leaseToken: ref.leaseToken, status, code, detail, now });
  }

  // the sweeper and the supervisor

  async jobListHeldBy(params: { ownerId: string }): Promise<JobRow[]> {
    return this.leases.heldRowsByOwner.all(params) as JobRow[];
  }

  async leasesRecoverExpired(params: RecoverParams & { limit: number }): Promise<RecoveredJob[]> {
    return this.write((now) => this.recoverRows(this.leases.expired.all({ now, limit: params.limit }) as HeldFacts[], params, now));
  }

  async leasesRecoverByOwner(params: RecoverParams & { ownerId: string; onlyJobId?: number }): Promise<RecoveredJob[]> {
    return this.write((now) => {
      const held = this.leases.heldByOwner.all({ ownerId: params.ownerId }) as HeldFacts[];
      return this.recoverRows(params.onlyJobId === undefined ? held : held.filter((row) => row.id === params.onlyJobId), params, now);
    });
  }

  async leasesReleaseByOwner(params: { ownerId: string; actor: string; reason: string }): Promise<RecoveredJob[]> {
    return this.write((now) =>
      (this.leases.heldByOwner.all({ ownerId: params.ownerId }) as HeldFacts[]).map((row) => {
        const ref = { id: row.id, leaseToken: row.lease_token };
        this.releaseHeld(ref, row.attempts, now, params.actor, params.reason);
        return recovered(row, 'QUEUED', now, true);
      }),
    );
  }

  /**
   * Takes back held jobs from a worker that is gone or silent. A job that was
   * only claimed (its handler never started) goes back without spending a
   * retry; a started one ends its attempt FAILED with the given code and
   * follows the retry policy.
   */
  private recoverRows(rows: HeldFacts[], params: RecoverParams, now: number): RecoveredJob[] {
    return rows.map((row) => {
      const ref = { id: row.id, leaseToken: row.lease_token };
      if (row.status === 'CLAIMED') {
        this.releaseHeld(ref, row.attempts, now, params.actor, `${params.errorCode}: ${params.errorDetail}`);
        return recovered(row, 'QUEUED', now, true);
      }
      const runAt = now + params.retryDelay(row.class, row.attempts);
      const error = { code: params.errorCode, detail: params.errorDetail, retryable: params.retryable ?? true };
      const status = this.settleFailure(ref, row, now, error, 'FAILED', runAt);
      this.event(row.id, now, params.event, params.actor, {
        attempt: row.attempts,
        owner_id: row.owner_id,
        code: params.errorCode,
        detail: params.errorDetail,
      });
      this.event(row.id, now, outcomeEvent(status), params.actor, {
        attempt: row.attempts,
        code: params.errorCode,
        ...(status === 'QUEUED' ? { run_at: runAt } : {}),
      });
      return recovered(row, status, status === 'QUEUED' ? runAt : null, false);
    });
  }

  async eventRecord(params: { jobId: number; event: JobEventName; actor: string; detail: Record<string, unknown> }): Promise<void> {
    await this.write((now) => this.event(params.jobId, now, params.event, params.actor, params.detail));
  }

  // worker registry

  async workerRegister(params: WorkerRegistration): Promise<void> {
    await this.write((now) => this.workers.insert.run({ ...params, now }));
  }

  async workerHeartbeat(params: WorkerHeartbeat): Promise<void> {
    await this.write((now) =>
      this.workers.heartbeat.run({
        id: params.id,
        state: params.state ?? null,
        cpuPercent: params.cpuPercent ?? null,
        memoryBytes: params.memoryBytes ?? null,
        jobKnown: params.jobId === undefined ? 0 : 1,
        jobId: params.jobId ?? null,
        now,
      }),
    );
  }

  async workerExit(params: { id: string; state: WorkerState; exitCode: number | null; exitSignal: string | null }): Promise<void> {
    await this.write((now) => this.workers.exit.run({ ...params, now }));
  }

  async workerList(params: { includeExited: boolean; limit: number }): Promise<WorkerRow[]> {
    const statement = params.includeExited ? this.workers.listAll : this.workers.listLive;
    return statement.all({ limit: params.limit }) as WorkerRow[];
  }

  async workerListLiveOnHost(params: { host: string }): Promise<WorkerRow[]> {
    return this.workers.liveOnHost.all(params) as WorkerRow[];
  }
}

function outcomeEvent(status: 'QUEUED' | 'FAILED' | 'CANCELLED'): JobEventName {
  return status === 'QUEUED' ? 'RETRY_SCHEDULED' : status;
}

function recovered(row: HeldFacts, status: RecoveredJob['status'], runAt: number | null, released: boolean): RecoveredJob {
  return { id: row.id, class: row.class, attempt: row.attempts, ownerId: row.owner_id, leaseToken: row.lease_token, status, runAt, released };
}
