import type pg from 'pg';
import type { Clock } from '../../clock.js';
import { claimFacts, type ClaimFacts, type HeldFacts } from '../facts.js';
import {
  fenced,
  LOST,
  type OutcomePlan,
  planOwnerRecovery,
  planRecovery,
  planRelease,
  recoveredJob,
} from '../outcomes.js';
import { EVENTS } from '../timeline.js';
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
import {
  changes,
  first,
  inOneStatement,
  inTransaction,
  openPool,
  parsePostgresUrl,
  rows,
  type Db,
  type PostgresTarget,
} from './connection.js';
import { insertJobs } from './inserts.js';
import { apply, leaseKey, record, settleBatch, type Runner } from './settlement.js';
import { runPostgresMigrations } from './migrations.js';
import { rollUp } from './stats-rollup.js';
import { PostgresReads } from './reads.js';
import { CLASS_SQL } from './sql/classes.js';
import { JOB_SQL } from './sql/jobs.js';
import { cancelQueuedStatement, failedStatement, failedValues, inBatches } from '../job-filters.js';
import { LEASE_SQL } from './sql/leases.js';
import { NOTIFY_SQL } from './sql/notify.js';
import { RETENTION_SQL } from './sql/retention.js';
import { SCHEDULE_SQL } from './sql/schedules.js';
import { WORKER_SQL } from './sql/workers.js';

export interface PostgresStoreOptions {
  /** postgres:// or postgresql:// URL; `?schema=` and `?clock_skew_ms=` are read by leasehold. */
  database: string;
  clock: Clock;
}

/**
 * The PostgreSQL driver (its reads: reads.ts). READ COMMITTED transactions,
 * all short. Claims and sweeps pick rows with FOR NO KEY UPDATE SKIP LOCKED
 * (never waiting, never sharing a row); every outcome reads its facts with
 * FOR NO KEY UPDATE, where SQLite relies on its IMMEDIATE write lock, and
 * writes with the same (id, lease_token, status) compare-and-swap. Rows a
 * transaction locks several at a time are locked in id order, so heartbeats,
 * settlements and a supervisor's take-back never deadlock; a deadlock or
 * serialization failure the server reports anyway reruns the whole
 * transaction. NO KEY UPDATE (not UPDATE) locks leave the key alone:
 * inserting an event or attempt that references a locked job never waits.
 * A worker's hot writes (a batch of successes with the next claim, a start,
 * a heartbeat, a progress) are each one statement of data-modifying CTEs,
 * without BEGIN and COMMIT: a round trip each (settlement.ts, sql/settle.ts).
 * Times come from the writing host's clock, as on SQLite (why: README,
 * PostgreSQL, Time).
 */
export class PostgresStore extends PostgresReads implements Store {
  readonly driver = 'postgres' as const;
  private closing: Promise<void> | undefined;

  private constructor(pool: pg.Pool, target: PostgresTarget, clock: Clock) {
    super(pool, target, clock);
  }

  /** Connect, create the schema if needed and migrate it. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const target = parsePostgresUrl(options.database);
    const pool = openPool(target);
    try {
      await runPostgresMigrations(pool, target.schema, options.clock.now());
      return new PostgresStore(pool, target, options.clock);
    } catch (error) {
      await pool.end();
      throw error;
    }
  }

  async migrate(): Promise<void> {
    await runPostgresMigrations(this.pool, this.target.schema, this.clock.now());
  }

  /** Safe twice; waits for the queries in flight and ends the subscriptions. */
  async close(): Promise<void> {
    this.closing ??= Promise.allSettled([...this.listening].map((stop) => stop())).then(() => this.pool.end());
    await this.closing;
  }

  private readonly runner: Runner = {
    write: (work) => this.write(work),
    oneStatement: (work) => this.oneStatement(work),
  };

  private write<T>(work: (db: pg.PoolClient, now: number) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, (db) => work(db, this.clock.now()));
  }

  /** A write that is one statement: no BEGIN and COMMIT round trips. */
  private oneStatement<T>(work: (db: pg.PoolClient, now: number) => Promise<T>): Promise<T> {
    return inOneStatement(this.pool, (db) => work(db, this.clock.now()));
  }

  /** Inside the transaction: wake the idle workers of these classes when it commits. */
  private async notify(db: Db, classes: Iterable<string>): Promise<void> {
    const distinct = [...new Set(classes)];
    if (distinct.length > 0) await rows(db, NOTIFY_SQL.jobsAvailable, [distinct]);
  }

  // producers and operators

  async jobInsert(params: { jobs: NewJob[]; actor: string }): Promise<InsertedJob[]> {
    return this.write((db, now) => this.insertAnnounced(db, params.jobs, params.actor, now));
  }

  /** Inside a transaction: insert the jobs (or find the holders of their keys), record ENQUEUED, and wake their classes' workers. */
  private async insertAnnounced(db: Db, jobs: NewJob[], actor: string, now: number): Promise<InsertedJob[]> {
    const inserted = await insertJobs(db, jobs, now);
    const created = jobs.flatMap((job, index) => (inserted[index]!.created ? [{ job, id: inserted[index]!.id }] : []));
    await record(
      db,
      created.map(({ job, id }) => EVENTS.enqueued(id, job, now, actor)),
    );
    await this.notify(
      db,
      created.map(({ job }) => job.class),
    );
    return inserted;
  }

  async scheduleAdvance(params: ScheduleAdvance): Promise<ScheduleAdvanceResult> {
    return this.write(async (db, now): Promise<ScheduleAdvanceResult> => {
      const moved =
        params.expected === null
          ? await changes(db, SCHEDULE_SQL.start, [params.class, params.name, params.through, now, params.actor])
          : await changes(db, SCHEDULE_SQL.advance, [
              params.class,
              params.name,
              params.expected,
              params.through,
              now,
              params.actor,
            ]);
      if (moved === 0) return { advanced: false };
      const jobs = await this.insertAnnounced(db, params.jobs, params.actor, now);
      const last = params.jobs.at(-1);
      if (last !== undefined)
        await changes(db, SCHEDULE_SQL.recordRun, [params.class, params.name, last.runAt, jobs.at(-1)!.id]);
      return { advanced: true, jobs };
    });
  }

  async jobCancel(params: { id: number; actor: string }): Promise<CancelOutcome> {
    return this.write(async (db, now): Promise<CancelOutcome> => {
      const job = await first<{ status: JobRow['status']; owner_id: string | null }>(db, JOB_SQL.lockForCancel, [
        params.id,
      ]);
      if (job === undefined) return 'not_found';
      if (job.status === 'QUEUED' && (await changes(db, JOB_SQL.cancelQueued, [params.id, now])) === 1) {
        await record(db, [EVENTS.cancelledQueued(params.id, now, params.actor)]);
        return 'cancelled';
      }
      if (job.status !== 'CLAIMED' && job.status !== 'RUNNING') return 'terminal';
      if ((await changes(db, JOB_SQL.requestCancel, [params.id, now])) === 0) return 'already_requested';
      await record(db, [EVENTS.cancelRequested(params.id, now, params.actor, job.owner_id)]);
      return 'cancel_requested';
    });
  }

  async jobRetry(params: { id: number; actor: string }): Promise<RetryOutcome> {
    return this.write(async (db, now): Promise<RetryOutcome> => {
      const retried = await rows<{ id: number; class: string }>(db, JOB_SQL.retryFailed, [now, params.id]);
      if (retried.length === 0)
        return (await first(db, JOB_SQL.exists, [params.id])) === undefined ? 'not_found' : 'not_failed';
      await this.requeuedByOperator(db, retried, now, params.actor);
      return 'queued';
    });
  }

  async jobRetryFailed(params: FailedFilter & BulkBounds & { actor: string }): Promise<number> {
    const statement = JOB_SQL[failedStatement('retry', params)];
    return inBatches(params, (throughId, limit) =>
      this.write(async (db, now) => {
        const retried = await rows<{ id: number; class: string }>(db, statement, [
          now,
          ...failedValues(params),
          throughId,
          limit,
        ]);
        await this.requeuedByOperator(db, retried, now, params.actor);
        return retried.length;
      }),
    );
  }

  async jobCancelQueued(params: { class?: string; actor: string } & BulkBounds): Promise<number> {
    const statement = JOB_SQL[cancelQueuedStatement(params)];
    return inBatches(params, (throughId, limit) =>
      this.write(async (db, now) => {
        const cancelled = await rows<{ id: number }>(db, statement, [
          now,
          ...(params.class === undefined ? [] : [params.class]),
          throughId,
          limit,
        ]);
        await record(
          db,
          cancelled.map(({ id }) => EVENTS.cancelledQueued(id, now, params.actor)),
        );
        return cancelled.length;
      }),
    );
  }

  private async requeuedByOperator(
    db: Db,
    jobs: { id: number; class: string }[],
    now: number,
    actor: string,
  ): Promise<void> {
    await record(
      db,
      jobs.map(({ id }) => EVENTS.manualRetry(id, now, actor)),
    );
    await this.notify(
      db,
      jobs.map((job) => job.class),
    );
  }

  async classPause(params: { class: string; actor: string }): Promise<PauseOutcome> {
    return this.write(async (db, now) =>
      (await rows(db, CLASS_SQL.pause, [params.class, now, params.actor])).length === 1 ? 'paused' : 'already_paused',
    );
  }

  /** Resumed: the class's idle workers are woken on commit, as by an enqueue. */
  async classResume(params: { class: string; actor: string }): Promise<ResumeOutcome> {
    return this.write(async (db, now) => {
      if ((await changes(db, CLASS_SQL.resume, [params.class, now, params.actor])) === 0) return 'not_paused';
      await this.notify(db, [params.class]);
      return 'resumed';
    });
  }

  async classDisabledRecord(params: { supervisorId: string; class: string; reason: string }): Promise<void> {
    await this.write((db, now) =>
      changes(db, CLASS_SQL.disable, [params.supervisorId, params.class, params.reason, now]),
    );
  }

  async classDisabledClear(params: { supervisorId: string; class?: string }): Promise<void> {
    const [statement, values] =
      params.class === undefined
        ? [CLASS_SQL.enableAll, [params.supervisorId]]
        : [CLASS_SQL.enable, [params.supervisorId, params.class]];
    await this.write((db) => changes(db, statement, values));
  }

  // workers

  /** The start and its STARTED event, or the zombie's record, in one statement (after a read of the claim's facts when the caller has no record of them). */
  async jobStart(params: JobStartParams): Promise<void> {
    const facts = params.claim === undefined ? await this.claimFacts(params) : claimFacts(params, params.claim);
    const started = await this.oneStatement((db, now) => {
      const startedAt = params.startedAt ?? now;
      // No facts: the token is not the job's, and the statement only records the zombie.
      const event = facts === undefined ? null : EVENTS.started(facts, startedAt).detail;
      return rows(db, LEASE_SQL.start, [
        params.id,
        params.leaseToken,
        startedAt,
        now,
        now + params.leaseMs,
        event,
        EVENTS.zombie(params, now, 'start').detail,
      ]);
    });
    fenced(params, 'start', started.length === 1 ? undefined : LOST);
  }

  /** What the claim a token names fixed: it never changes while the token is the job's, so no lock is needed. */
  private async claimFacts(ref: LeaseRef): Promise<ClaimFacts | undefined> {
    return first<ClaimFacts>(this.pool, LEASE_SQL.claimFacts, [ref.id, ref.leaseToken]);
  }

  /** Every renewal, and the zombie's record of every lease lost, in one statement. */
  async leasesExtend(params: { leases: LeaseRef[]; leaseMs: number }): Promise<LeaseStatus[]> {
    if (params.leases.length === 0) return [];
    type Renewed = { id: number; lease_token: string; lease_expires_at: number; cancel_requested_at: number | null };
    const found = await this.oneStatement((db, now) => {
      const zombies = params.leases.map((ref) => EVENTS.zombie(ref, now, 'heartbeat').detail);
      const bind = [
        params.leases.map((ref) => ref.id),
        params.leases.map((ref) => ref.leaseToken),
        now,
        now + params.leaseMs,
        zombies,
      ];
      return rows<Renewed>(db, LEASE_SQL.extendMany, bind);
    });
    const renewed = new Map(found.map((row) => [leaseKey(row.id, row.lease_token), row]));
    return params.leases.map((ref): LeaseStatus => {
      const row = renewed.get(leaseKey(ref.id, ref.leaseToken));
      if (row === undefined) return { id: ref.id, held: false };
      return {
        id: ref.id,
        held: true,
        leaseExpiresAt: row.lease_expires_at,
        cancelRequested: row.cancel_requested_at !== null,
      };
    });
  }

  async jobProgress(params: LeaseRef & { progress: string }): Promise<void> {
    const written = await this.oneStatement((db, now) =>
      rows(db, LEASE_SQL.progress, [
        params.id,
        params.leaseToken,
        params.progress,
        now,
        EVENTS.zombie(params, now, 'progress').detail,
      ]),
    );
    fenced(params, 'progress', written.length === 1 ? undefined : LOST);
  }

  async jobsSettle(params: {
    settlements: Settlement[];
    claim?: ClaimRequest;
  }): Promise<{ settled: SettleResult[]; claimed: ClaimedJob[] }> {
    return settleBatch(this.runner, params);
  }

  // the sweeper and the supervisor

  /** Leases that ran out more than clockSkewMs ago; several sweepers at once each take different jobs. */
  async leasesRecoverExpired(params: RecoverParams & { limit: number }): Promise<RecoveredJob[]> {
    return this.write(async (db, now) => {
      const expired = await rows<HeldFacts>(db, LEASE_SQL.expired, [now - this.target.clockSkewMs, params.limit]);
      return this.recoverRows(db, expired, (row) => planRecovery(row, params, now), now);
    });
  }

  async leasesRecoverByOwner(params: OwnerRecovery): Promise<RecoveredJob[]> {
    return this.write(async (db, now) => {
      const held = await rows<HeldFacts>(db, LEASE_SQL.heldByOwner, [params.ownerId]);
      return this.recoverRows(db, held, (row) => planOwnerRecovery(row, params, now), now);
    });
  }

  async leasesReleaseByOwner(params: { ownerId: string; actor: string; reason: string }): Promise<RecoveredJob[]> {
    return this.write(async (db, now) => {
      const held = await rows<HeldFacts>(db, LEASE_SQL.heldByOwner, [params.ownerId]);
      return this.recoverRows(db, held, (row) => planRelease(row, now, params.actor, params.reason), now);
    });
  }

  /** Inside a transaction: take back locked held rows, each as `plan` says. */
  private async recoverRows(
    db: Db,
    held: HeldFacts[],
    plan: (row: HeldFacts) => OutcomePlan,
    now: number,
  ): Promise<RecoveredJob[]> {
    const plans = held.map(plan);
    await apply(db, plans, now);
    return held.map((row, index) => recoveredJob(row, plans[index]!));
  }

  // worker registry

  async workerRegister(params: WorkerRegistration): Promise<void> {
    const { id, kind, host, supervisorId, pid, state, restarts } = params;
    await this.write((db, now) =>
      changes(db, WORKER_SQL.insert, [id, kind, host, supervisorId, pid, params.class, state, restarts, now]),
    );
  }

  async workerHeartbeat(params: WorkerHeartbeat): Promise<void> {
    const { id, state, cpuPercent, memoryBytes, jobId } = params;
    const values = (now: number) => [
      id,
      now,
      state ?? null,
      cpuPercent ?? null,
      memoryBytes ?? null,
      jobId !== undefined,
      jobId ?? null,
    ];
    await this.write((db, now) => changes(db, WORKER_SQL.heartbeat, values(now)));
  }

  async workerExit(params: {
    id: string;
    state: WorkerState;
    exitCode: number | null;
    exitSignal: string | null;
  }): Promise<void> {
    await this.write((db, now) =>
      changes(db, WORKER_SQL.exit, [params.id, params.state, params.exitCode, params.exitSignal, now]),
    );
  }

  // retention and the stats rollup

  async jobsPruneBatch(params: { status: TerminalStatus; finishedBefore: number; limit: number }): Promise<number> {
    if (params.limit < 1) return 0;
    return this.write((db) =>
      changes(db, RETENTION_SQL.deleteOlderBatch, [params.status, params.finishedBefore, params.limit]),
    );
  }

  async statsRollUp(params: { maxMinutes: number }): Promise<number> {
    return this.write((db, now) => rollUp(db, now, params.maxMinutes));
  }
}
