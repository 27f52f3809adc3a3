import type { Clock } from '../../clock.js';
import { LeaseLostError } from '../../errors.js';
import { eventDetail, statusAfterFailure } from '../policy.js';
import type {
  AttemptRow,
  ClaimRequest,
  LeaseStatus,
  Settlement,
  SettleResult,
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

/** A lease plus the lazily written start, for the outcome statements. */
type StartedRef = LeaseRef & { startedAt: number | null };

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

  async jobClaim(params: ClaimRequest): Promise<ClaimedJob[]> {
    return this.write((now) => this.claim(params, now));
  }

  /** Inside a transaction: claim up to `limit` due jobs, each with its own token, attempt row and CLAIMED event. */
  private claim(params: ClaimRequest, now: number): ClaimedJob[] {
    if (params.classes.length === 0 || params.limit < 1) return [];
    const bind = { ownerId: params.ownerId, now, leaseExpiresAt: now + params.leaseMs, limit: params.limit };
    const rows = (
      params.classes.length === 1
        ? this.leases.claimOneClass.all({ ...bind, class: params.classes[0] })
        : this.leases.claimManyClasses.all({ ...bind, classes: JSON.stringify(params.classes) })
    ) as ClaimedRow[];
    for (const row of rows) {
      this.history.attemptInsert.run({ jobId: row.id, attempt: row.attempts, ownerId: params.ownerId, leaseToken: row.lease_token, now });
      this.event(row.id, now, 'CLAIMED', params.ownerId, { attempt: row.attempts });
    }
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

  async jobStart(params: LeaseRef & { leaseMs: number; startedAt?: number }): Promise<void> {
    const outcome = await this.write((now) => {
      const startedAt = params.startedAt ?? now;
      const row = this.leases.start.get({ ...params, startedAt, now, leaseExpiresAt: now + params.leaseMs }) as { attempts: number } | undefined;
      if (row === undefined) return this.rejectZombie(params, now, 'start');
      this.event(params.id, startedAt, 'STARTED', 'worker', { attempt: row.attempts });
      return undefined;
    });
    this.fenced(params, 'start', outcome);
  }

  async leaseExtend(params: LeaseRef & { leaseMs: number }): Promise<HeartbeatResult> {
    const [status] = await this.leasesExtend({ leases: [params], leaseMs: params.leaseMs });
    if (status === undefined || !status.held) throw new LeaseLostError(params.id, params.leaseToken, 'heartbeat');
    return { leaseExpiresAt: status.leaseExpiresAt, cancelRequested: status.cancelRequested };
  }

  async leasesExtend(params: { leases: LeaseRef[]; leaseMs: number }): Promise<LeaseStatus[]> {
    if (params.leases.length === 0) return [];
    return this.write((now) =>
      params.leases.map((ref): LeaseStatus => {
        const row = this.leases.extend.get({ ...ref, now, leaseExpiresAt: now + params.leaseMs }) as
          | { lease_expires_at: number; cancel_requested_at: number | null }
          | undefined;
        if (row === undefined) {
          this.rejectZombie(ref, now, 'heartbeat');
          return { id: ref.id, held: false };
        }
        return { id: ref.id, held: true, leaseExpiresAt: row.lease_expires_at, cancelRequested: row.cancel_requested_at !== null };
      }),
    );
  }

  async jobProgress(params: LeaseRef & { progress: string }): Promise<void> {
    const outcome = await this.write((now) =>
      this.leases.progress.run(params).changes === 1 ? undefined : this.rejectZombie(params, now, 'progress'),
    );
    this.fenced(params, 'progress', outcome);
  }

  async jobsSettle(params: { settlements: Settlement[]; claim?: ClaimRequest }): Promise<{ settled: SettleResult[]; claimed: ClaimedJob[] }> {
    return this.write((now) => ({
      settled: params.settlements.map((settlement) => this.settle(settlement, now)),
      claimed: params.claim === undefined ? [] : this.claim(params.claim, now),
    }));
  }

  async jobCompleteIfHeld(params: LeaseRef & { result: string | null }): Promise<void> {
    await this.settleOrThrow({ id: params.id, leaseToken: params.leaseToken, startedAt: null, verdict: { type: 'complete', result: params.result } });
  }

  async jobFailIfHeld(params: LeaseRef & { error: FailureInput; retryDelayMs: number }): Promise<FailOutcome> {
    const verdict = { type: 'fail' as const, error: params.error, retryDelayMs: params.retryDelayMs };
    const settled = await this.settleOrThrow({ id: params.id, leaseToken: params.leaseToken, startedAt: null, verdict });
    if (settled.status === 'QUEUED') return { status: 'QUEUED', runAt: settled.runAt ?? 0 };
    return { status: settled.status === 'CANCELLED' ? 'CANCELLED' : 'FAILED' };
  }

  async jobReleaseIfHeld(params: LeaseRef & { reason: string }): Promise<void> {
    await this.settleOrThrow({ id: params.id, leaseToken: params.leaseToken, startedAt: null, verdict: { type: 'release', reason: params.reason } });
  }

  private async settleOrThrow(settlement: Settlement): Promise<Extract<SettleResult, { held: true }>> {
    const result = await this.write((now) => this.settle(settlement, now));
    if (!result.held) throw new LeaseLostError(settlement.id, settlement.leaseToken, settlement.verdict.type);
    return result;
  }

  /**
   * Inside a transaction: write one verdict, fenced by the lease. A job whose
   * start was not written yet gets its STARTED event, stamped when the
   * handler really started, just before its outcome.
   */
  private settle(settlement: Settlement, now: number): SettleResult {
    const { id, leaseToken, startedAt, verdict } = settlement;
    const facts = this.leases.heldFacts.get({ id, leaseToken }) as Omit<HeldFacts, 'id' | 'owner_id' | 'lease_token'> | undefined;
    if (facts === undefined) {
      this.rejectZombie(settlement, now, verdict.type);
      return { id, held: false };
    }
    const lazyStart = facts.status === 'CLAIMED' && startedAt !== null ? startedAt : null;
    if (lazyStart !== null) this.event(id, lazyStart, 'STARTED', 'worker', { attempt: facts.attempts });
    const ref = { id, leaseToken, startedAt: lazyStart };
    switch (verdict.type) {
      case 'complete':
        this.leases.complete.run({ ...ref, result: verdict.result, now });
        this.finishAttempt(ref, facts.attempts, now, 'SUCCEEDED', null, null);
        this.event(id, now, 'SUCCEEDED', 'worker', { attempt: facts.attempts });
        return { id, held: true, status: 'SUCCEEDED', runAt: null };
      case 'fail': {
        const runAt = now + verdict.retryDelayMs;
        const status = this.settleFailure(ref, facts, now, verdict.error, runAt);
        this.event(id, now, outcomeEvent(status), 'worker', {
          attempt: facts.attempts,
          code: verdict.error.code,
          detail: verdict.error.detail,
          ...(status === 'QUEUED' ? { run_at: runAt } : {}),
        });
        return { id, held: true, status, runAt: status === 'QUEUED' ? runAt : null };
      }
      case 'release':
        this.releaseHeld(ref, facts.attempts, now, 'worker', verdict.reason);
        return { id, held: true, status: 'QUEUED', runAt: now };
    }
  }

  /**
   * Ends a held job's attempt badly and moves the job on: requeued with a
   * retry delay, or FAILED / CANCELLED for good. The caller has read `facts`
   * in this same transaction.
   */
  private settleFailure(
    ref: StartedRef,
    facts: Pick<HeldFacts, 'attempts' | 'releases' | 'max_retries' | 'cancel_requested_at'>,
    now: number,
    error: FailureInput,
    runAt: number,
  ): 'QUEUED' | 'FAILED' | 'CANCELLED' {
    const status = statusAfterFailure(
      { attempts: facts.attempts, releases: facts.releases, maxRetries: facts.max_retries, cancelRequested: facts.cancel_requested_at !== null },
      error,
    );
    const bind = { ...ref, now, code: error.code, detail: error.detail };
    if (status === 'QUEUED') this.leases.requeue.run({ ...bind, runAt });
    else this.leases.finishBadly.run({ ...bind, status });
    this.finishAttempt(ref, facts.attempts, now, status === 'CANCELLED' ? 'CANCELLED' : 'FAILED', error.code, error.detail);
    return status;
  }

  private releaseHeld(ref: StartedRef, attempt: number, now: number, actor: string, reason: string): void {
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
    return this.write((now) => this.recoverRows(this.leases.expired.all({ now, limit: params.limit }) as HeldFacts[], params, now, new Set()));
  }

  async leasesRecoverByOwner(params: RecoverParams & { ownerId: string; startedJobIds?: number[] }): Promise<RecoveredJob[]> {
    return this.write((now) =>
      this.recoverRows(this.leases.heldByOwner.all({ ownerId: params.ownerId }) as HeldFacts[], params, now, new Set(params.startedJobIds)),
    );
  }

  async leasesReleaseByOwner(params: { ownerId: string; actor: string; reason: string }): Promise<RecoveredJob[]> {
    return this.write((now) =>
      (this.leases.heldByOwner.all({ ownerId: params.ownerId }) as HeldFacts[]).map((row) => {
        this.releaseHeld({ id: row.id, leaseToken: row.lease_token, startedAt: null }, row.attempts, now, params.actor, params.reason);
        return recovered(row, 'QUEUED', now, true);
      }),
    );
  }

  /**
   * Takes back held jobs from a worker that is gone or silent. A job only
   * claimed (its handler never started, as far as anyone knows) goes back
   * without spending a retry; a started one ends its attempt FAILED with the
   * given code and follows the retry policy.
   */
  private recoverRows(rows: HeldFacts[], params: RecoverParams, now: number, knownStarted: Set<number>): RecoveredJob[] {
    return rows.map((row) => {
      const ref = { id: row.id, leaseToken: row.lease_token, startedAt: null };
      if (row.status === 'CLAIMED' && !knownStarted.has(row.id)) {
        this.releaseHeld(ref, row.attempts, now, params.actor, `${params.errorCode}: ${params.errorDetail}`);
        return recovered(row, 'QUEUED', now, true);
      }
      const runAt = now + params.retryDelay(row.class, row.attempts);
      const error = { code: params.errorCode, detail: params.errorDetail, retryable: params.retryable ?? true };
      const status = this.settleFailure(ref, row, now, error, runAt);
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
