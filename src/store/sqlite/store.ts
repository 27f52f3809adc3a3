import type { Clock } from '../../clock.js';
import { claimedJobs, type ClaimedRow, type ClaimFacts, type HeldFacts, liveFacts } from '../facts.js';
import {
  type BlindSettlement,
  type EndedAttempt,
  fenced,
  LOST,
  type OutcomePlan,
  ownEarlierSettlement,
  planBlindSuccess,
  planOwnerRecovery,
  planRecovery,
  planRelease,
  planSettlement,
  recoveredJob,
  settleResult,
} from '../outcomes.js';
import { EVENTS, type PlannedEvent } from '../timeline.js';
import { allowance, prunePlan, rateLimitedClass, windowStart } from '../rate-limit.js';
import type {
  CancelOutcome,
  ClaimedJob,
  ClaimRequest,
  InsertedJob,
  JobRow,
  JobStartParams,
  LeaseRef,
  LeaseStatus,
  NewJob,
  PauseOutcome,
  RecoveredJob,
  ResumeOutcome,
} from '../types.js';
import { cancelQueuedStatement, failedStatement, inBatches } from '../job-filters.js';
import { maxRetriesFromClass } from '../policy.js';
import type {
  BulkBounds,
  FailedFilter,
  OwnerRecovery,
  RecoverParams,
  RetryOutcome,
  Settlement,
  SettleResult,
  Store,
  TerminalStatus,
  WorkerHeartbeat,
  WorkerRegistration,
  WorkerState,
} from '../types.js';
import type { ScheduleAdvance, ScheduleAdvanceResult } from '../schedules.js';
import { openSqlite, withBusyRetry, type SqliteDb } from './connection.js';
import { runSqliteMigrations } from './migrations.js';
import { MultiRowInserter } from './multi-row.js';
import { SqliteReads } from './reads.js';
import { HISTORY_INSERTS } from './sql/history.js';
import { jobLogRows } from '../job-logs.js';
import { rollUp } from './stats-rollup.js';

export interface SqliteStoreOptions {
  path: string;
  clock: Clock;
}

/**
 * The SQLite driver (its reads: reads.ts). better-sqlite3 is synchronous; every write is one
 * IMMEDIATE transaction (the write lock is taken up front, so two writers
 * never deadlock upgrading a read lock), retried on SQLITE_BUSY.
 */
export class SqliteStore extends SqliteReads implements Store {
  readonly driver = 'sqlite' as const;
  /** One IMMEDIATE transaction wrapper, built once: `write` runs each operation's body inside it. */
  private readonly transaction: (work: (now: number) => unknown, now: number) => unknown;
  private readonly eventRows: MultiRowInserter;
  private readonly attemptRows: MultiRowInserter;
  private readonly logRows: MultiRowInserter;
  /** The timeline rows the transaction in progress planned, inserted together before it commits. */
  private pendingEvents: PlannedEvent[] = [];
  /** The last write in line (see `write`). */
  private writes: Promise<unknown> = Promise.resolve();

  private constructor(db: SqliteDb, clock: Clock) {
    super(db, clock);
    this.eventRows = new MultiRowInserter(db, HISTORY_INSERTS.events);
    this.attemptRows = new MultiRowInserter(db, HISTORY_INSERTS.attempts);
    this.logRows = new MultiRowInserter(db, HISTORY_INSERTS.logs);
    const wrapped = db.transaction((work: (now: number) => unknown, now: number) => {
      const result = work(now);
      this.eventRows.run(this.pendingEvents.map((e) => [e.jobId, e.ts, e.event, e.actor, e.detail]));
      return result;
    });
    this.transaction = (work, now) => {
      this.pendingEvents = [];
      return wrapped.immediate(work, now);
    };
  }

  /** Open (creating the file and folder if needed) and migrate; each statement is prepared on its first use (prepareAll). */
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

  async migrate(): Promise<void> {
    await withBusyRetry(() => runSqliteMigrations(this.db, this.clock.now()));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /**
   * Writes take turns. Each try waits up to the busy timeout inside SQLite,
   * blocking the event loop; with several writes waiting out a lock at once
   * those waits added up to seconds without a turn for IPC (a child that
   * cannot answer a ping is killed as blocked). In turn, one waits in SQLite
   * and the rest wait with the loop free.
   */
  private write<T>(work: (now: number) => T): Promise<T> {
    const turn = this.writes.then(() => withBusyRetry(() => this.transaction(work, this.clock.now()) as T));
    this.writes = turn.catch(() => undefined);
    return turn;
  }

  /** Inside a transaction: append to the timeline when the transaction's work is done. */
  private record(event: PlannedEvent): void {
    this.pendingEvents.push(event);
  }

  /** The other half of every fenced write: say in the timeline that a stale holder was turned away. */
  private rejectZombie(ref: LeaseRef, now: number, operation: string): typeof LOST {
    if (this.jobs.exists.get(ref.id) !== undefined) this.record(EVENTS.zombie(ref, now, operation));
    return LOST;
  }

  // producers and operators

  async jobInsert(params: { jobs: NewJob[]; actor: string }): Promise<InsertedJob[]> {
    return this.write((now) => this.insertJobs(params.jobs, params.actor, now));
  }

  /** Inside a transaction: insert each job, or find the one that holds its idempotency key. */
  private insertJobs(jobs: NewJob[], actor: string, now: number): InsertedJob[] {
    return jobs.map((job) => {
      if (job.idempotencyKey !== null) {
        const existing = this.jobs.findByKey.get(job.class, job.idempotencyKey) as { id: number } | undefined;
        if (existing !== undefined) return { id: existing.id, created: false };
      }
      const { id } = this.jobs.insert.get({ ...job, maxRetriesFromClass: maxRetriesFromClass(job), now }) as {
        id: number;
      };
      this.record(EVENTS.enqueued(id, job, now, actor));
      return { id, created: true };
    });
  }

  async scheduleAdvance(params: ScheduleAdvance): Promise<ScheduleAdvanceResult> {
    return this.write((now): ScheduleAdvanceResult => {
      const bind = {
        class: params.class,
        name: params.name,
        expected: params.expected,
        through: params.through,
        now,
        actor: params.actor,
      };
      const moved = params.expected === null ? this.schedules.start.run(bind) : this.schedules.advance.run(bind);
      if (moved.changes === 0) return { advanced: false };
      const jobs = this.insertJobs(params.jobs, params.actor, now);
      const last = params.jobs.at(-1);
      if (last !== undefined)
        this.schedules.recordRun.run({
          class: params.class,
          name: params.name,
          runAt: last.runAt,
          jobId: jobs.at(-1)!.id,
        });
      return { advanced: true, jobs };
    });
  }

  async jobCancel(params: { id: number; actor: string }): Promise<CancelOutcome> {
    return this.write((now): CancelOutcome => {
      const job = this.jobs.get.get(params.id) as JobRow | undefined;
      if (job === undefined) return 'not_found';
      if (this.jobs.cancelQueued.run({ id: params.id, now }).changes === 1) {
        this.record(EVENTS.cancelledQueued(params.id, now, params.actor));
        return 'cancelled';
      }
      if (this.jobs.requestCancel.run({ id: params.id, now }).changes === 1) {
        this.record(EVENTS.cancelRequested(params.id, now, params.actor, job.owner_id));
        return 'cancel_requested';
      }
      return job.status === 'CLAIMED' || job.status === 'RUNNING' ? 'already_requested' : 'terminal';
    });
  }

  async jobRetry(params: { id: number; actor: string }): Promise<RetryOutcome> {
    return this.write((now): RetryOutcome => {
      if (this.jobs.retryFailed.run({ id: params.id, now }).changes === 1) {
        this.record(EVENTS.manualRetry(params.id, now, params.actor));
        return 'queued';
      }
      return this.jobs.exists.get(params.id) === undefined ? 'not_found' : 'not_failed';
    });
  }

  async jobRetryFailed(params: FailedFilter & BulkBounds & { actor: string }): Promise<number> {
    const statement = this.jobs[failedStatement('retry', params)];
    return inBatches(params, (throughId, limit) =>
      this.write((now) => {
        const rows = statement.all({ now, class: params.class, errorCode: params.errorCode, throughId, limit }) as {
          id: number;
        }[];
        for (const { id } of rows) this.record(EVENTS.manualRetry(id, now, params.actor));
        return rows.length;
      }),
    );
  }

  async jobCancelQueued(params: { class?: string; actor: string } & BulkBounds): Promise<number> {
    const statement = this.jobs[cancelQueuedStatement(params)];
    return inBatches(params, (throughId, limit) =>
      this.write((now) => {
        const rows = statement.all({ now, class: params.class, throughId, limit }) as { id: number }[];
        for (const { id } of rows) this.record(EVENTS.cancelledQueued(id, now, params.actor));
        return rows.length;
      }),
    );
  }

  async classPause(params: { class: string; actor: string }): Promise<PauseOutcome> {
    return this.write((now) =>
      this.classes.pause.get({ ...params, now }) === undefined ? 'already_paused' : 'paused',
    );
  }

  async classResume(params: { class: string; actor: string }): Promise<ResumeOutcome> {
    return this.write((now) => (this.classes.resume.run({ ...params, now }).changes === 1 ? 'resumed' : 'not_paused'));
  }

  async classDisabledRecord(params: { supervisorId: string; class: string; reason: string }): Promise<void> {
    await this.write((now) => this.classes.disable.run({ ...params, now }));
  }

  async classDisabledClear(params: { supervisorId: string; class?: string }): Promise<void> {
    await this.write(() =>
      params.class === undefined ? this.classes.enableAll.run(params) : this.classes.enable.run(params),
    );
  }

  // workers

  /**
   * Inside a transaction: claim up to `limit` due jobs, each with its own token
   * and attempt row (its start will carry the claim). A rate-limited claim
   * takes what its window has left; SQLite's one writer serializes it.
   */
  private claim(params: ClaimRequest, now: number): ClaimedJob[] {
    const { rateLimit } = params;
    const jobClass = rateLimit === undefined ? undefined : rateLimitedClass(params);
    const limit =
      rateLimit === undefined
        ? params.limit
        : allowance(
            params.limit,
            rateLimit,
            (this.classes.startsSince.get({ class: jobClass, since: windowStart(now, rateLimit) }) as { count: number })
              .count,
          );
    if (params.classes.length === 0 || limit < 1) return [];
    const bind = {
      ownerId: params.ownerId,
      now,
      leaseExpiresAt: now + params.leaseMs,
      limit,
      classMaxRetries: params.classMaxRetries,
    };
    const rows = (
      params.classes.length === 1
        ? this.leases.claimOneClass.all({ ...bind, class: params.classes[0] })
        : this.leases.claimManyClasses.all({ ...bind, classes: JSON.stringify(params.classes) })
    ) as ClaimedRow[];
    this.attemptRows.run(rows.map((row) => [row.id, row.attempts, params.ownerId, row.lease_token, now]));
    if (rateLimit !== undefined && rows.length > 0) {
      this.classes.startsAdd.run({ class: jobClass, now, count: rows.length });
      this.classes.startsPrune.run({ class: jobClass, ...prunePlan(now, rateLimit, rows.length) });
    }
    return claimedJobs(rows, params.ownerId, now);
  }

  /** Whether a claim of these classes would take a job now; when the read fails, the claim is made to find out (and report the fault). */
  private anyDue(classes: string[]): boolean {
    const now = this.clock.now();
    try {
      const due =
        classes.length === 1
          ? this.leases.dueOneClass.get({ class: classes[0], now })
          : this.leases.dueManyClasses.get({ classes: JSON.stringify(classes), now });
      return due !== undefined;
    } catch {
      return true;
    }
  }

  async jobStart(params: JobStartParams): Promise<void> {
    const outcome = await this.write((now) => {
      const startedAt = params.startedAt ?? now;
      const row = this.leases.start.get({ ...params, startedAt, now, leaseExpiresAt: now + params.leaseMs }) as
        ClaimFacts | undefined;
      if (row === undefined) return this.rejectZombie(params, now, 'start');
      this.record(EVENTS.started(row, startedAt));
      return undefined;
    });
    fenced(params, 'start', outcome);
  }

  async leasesExtend(params: { leases: LeaseRef[]; leaseMs: number }): Promise<LeaseStatus[]> {
    if (params.leases.length === 0) return [];
    return this.write((now) =>
      params.leases.map((ref): LeaseStatus => {
        const row = this.leases.extend.get({ ...ref, now, leaseExpiresAt: now + params.leaseMs }) as
          { lease_expires_at: number; cancel_requested_at: number | null } | undefined;
        if (row === undefined) {
          this.rejectZombie(ref, now, 'heartbeat');
          return { id: ref.id, held: false };
        }
        return {
          id: ref.id,
          held: true,
          leaseExpiresAt: row.lease_expires_at,
          cancelRequested: row.cancel_requested_at !== null,
        };
      }),
    );
  }

  async jobProgress(params: LeaseRef & { progress: string }): Promise<void> {
    const outcome = await this.write((now) =>
      this.leases.progress.run(params).changes === 1 ? undefined : this.rejectZombie(params, now, 'progress'),
    );
    fenced(params, 'progress', outcome);
  }

  async jobsSettle(params: {
    settlements: Settlement[];
    claim?: ClaimRequest;
  }): Promise<{ settled: SettleResult[]; claimed: ClaimedJob[] }> {
    // An idle worker is woken by every commit: it looks before it takes the write lock from those who have work to write.
    if (params.settlements.length === 0 && params.claim !== undefined && !this.anyDue(params.claim.classes))
      return { settled: [], claimed: [] };
    return this.write((now) => ({
      settled: params.settlements.map((settlement) => this.settleHeld(settlement, now) ?? this.settle(settlement, now)),
      claimed: params.claim === undefined ? [] : this.claim(params.claim, now),
    }));
  }

  /**
   * Inside a transaction: a success whose holder passed its claim record,
   * planned from that record and written by one fenced UPDATE instead of a
   * read and a write (the read was a sixth of a no-op job's store time).
   * Undefined: the row is not as its holder knows it; the general way decides.
   */
  private settleHeld(settlement: Settlement, now: number): SettleResult | undefined {
    if (settlement.verdict.type !== 'complete' || settlement.claim === undefined) return undefined;
    const { plan, trail } = planBlindSuccess(settlement as BlindSettlement, now);
    // A holder that wrote the start passes no startedAt: the row is RUNNING, and its trail is written.
    const heldAs = settlement.startedAt === null ? 'RUNNING' : 'CLAIMED';
    const bind = {
      id: plan.id,
      leaseToken: plan.leaseToken,
      heldAs,
      result: settlement.verdict.result,
      startedAt: plan.startedAt,
      now,
    };
    if (this.leases.completeHeld.run(bind).changes === 0) return undefined;
    if (heldAs === 'CLAIMED') for (const event of trail) this.record(event);
    this.writeHistory(plan, now);
    return settleResult(plan);
  }

  /** Inside a transaction: write one verdict, fenced by the lease (the plan's rules live in ../outcomes.ts). */
  private settle(settlement: Settlement, now: number): SettleResult {
    const facts = liveFacts(
      this.leases.heldFacts.get({ id: settlement.id, leaseToken: settlement.leaseToken }) as HeldFacts | undefined,
      now,
    );
    if (facts === undefined) {
      const ended = this.history.attemptByToken.get({ jobId: settlement.id, leaseToken: settlement.leaseToken }) as
        EndedAttempt | undefined;
      const own = ownEarlierSettlement(settlement, ended);
      if (own !== undefined) return own;
      this.rejectZombie(settlement, now, settlement.verdict.type);
      return { id: settlement.id, held: false };
    }
    const plan = planSettlement(settlement, facts, now);
    this.apply(plan, now);
    return settleResult(plan);
  }

  /** Inside a transaction: run an outcome plan with the fenced statements; the caller read its facts under the lease. */
  private apply(plan: OutcomePlan, now: number): void {
    const ref = { id: plan.id, leaseToken: plan.leaseToken, startedAt: plan.startedAt, now };
    const job = plan.job;
    switch (job.type) {
      case 'complete':
        this.leases.complete.run({ ...ref, result: job.result });
        break;
      case 'requeue':
        this.leases.requeue.run({ ...ref, runAt: job.runAt, code: job.code, detail: job.detail });
        break;
      case 'finishBadly':
        this.leases.finishBadly.run({ ...ref, status: job.status, code: job.code, detail: job.detail });
        break;
      case 'release':
        this.leases.release.run(ref);
        break;
    }
    this.writeHistory(plan, now);
  }

  /** Inside a transaction: what an outcome writes besides its job row: the attempt's end, its log lines, its events. */
  private writeHistory(plan: OutcomePlan, now: number): void {
    this.history.attemptFinish.run({
      jobId: plan.id,
      attempt: plan.attempt,
      leaseToken: plan.leaseToken,
      ...plan.attemptEnd,
      now,
    });
    if (plan.logs !== undefined)
      this.logRows.run(
        jobLogRows(plan.id, plan.attempt, plan.logs).map((r) => [
          r.job_id,
          r.attempt,
          r.seq,
          r.ts,
          r.level,
          r.message,
          r.fields,
        ]),
      );
    for (const event of plan.events) this.record(event);
  }

  // the sweeper and the supervisor

  async leasesRecoverExpired(params: RecoverParams & { limit: number }): Promise<RecoveredJob[]> {
    return this.write((now) =>
      this.recoverRows(
        this.leases.expired.all({ now, limit: params.limit }) as HeldFacts[],
        (row) => planRecovery(row, params, now),
        now,
      ),
    );
  }

  async leasesRecoverByOwner(params: OwnerRecovery): Promise<RecoveredJob[]> {
    return this.write((now) =>
      this.recoverRows(
        this.leases.heldByOwner.all({ ownerId: params.ownerId }) as HeldFacts[],
        (row) => planOwnerRecovery(row, params, now),
        now,
      ),
    );
  }

  async leasesReleaseByOwner(params: { ownerId: string; actor: string; reason: string }): Promise<RecoveredJob[]> {
    return this.write((now) =>
      this.recoverRows(
        this.leases.heldByOwner.all({ ownerId: params.ownerId }) as HeldFacts[],
        (row) => planRelease(row, now, params.actor, params.reason),
        now,
      ),
    );
  }

  /** Inside a transaction: take back held rows, each as `plan` says. */
  private recoverRows(rows: HeldFacts[], plan: (row: HeldFacts) => OutcomePlan, now: number): RecoveredJob[] {
    return rows.map((row) => {
      const planned = plan(row);
      this.apply(planned, now);
      return recoveredJob(row, planned);
    });
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

  async workerExit(params: {
    id: string;
    state: WorkerState;
    exitCode: number | null;
    exitSignal: string | null;
  }): Promise<void> {
    await this.write((now) => this.workers.exit.run({ ...params, now }));
  }

  // retention and the stats rollup

  async jobsPruneBatch(params: { status: TerminalStatus; finishedBefore: number; limit: number }): Promise<number> {
    const bind = { status: params.status, before: params.finishedBefore, limit: params.limit };
    return params.limit < 1 ? 0 : this.write(() => this.retention.deleteOlderBatch.run(bind).changes);
  }

  async statsRollUp(params: { maxMinutes: number }): Promise<number> {
    return this.write((now) => rollUp(this.rollup, now, params.maxMinutes));
  }
}
