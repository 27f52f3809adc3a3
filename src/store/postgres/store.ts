/**
 * The PostgreSQL driver: several supervisors on several hosts, one queue.
 *
 * Time. Every time leasehold writes (claimed_at, heartbeat_at,
 * lease_expires_at, run_at, ...) comes from the injected Clock of the process
 * that writes it, the host's clock by default, exactly as on SQLite; the
 * database's clock is not used. Why: a supervisor compares its children's
 * heartbeat_at and started_at with its own clock (health watch), and a child
 * stamps the real start of a handler with its clock; those readers and
 * writers share a host, so host time keeps them consistent whatever the
 * database's clock says. Tests drive SQL time with the same Clock. The one
 * place where two hosts' clocks meet is the sweeper: host B takes back a
 * lease that host A wrote. A healthy holder renews its lease every
 * heartbeat_seconds (at most half the lease), so a sweeping host ahead of
 * the holder by less than lease_seconds - heartbeat_seconds never takes a
 * live lease; one behind only recovers late by its skew. `clock_skew_ms`
 * (URL parameter, default 0) adds a margin on top for those who want one.
 * Beyond the slack fencing still holds (a stolen job's worker is turned
 * away at its next write and the job runs again: at least once, committed
 * once). clockOffsetMs() measures a host against the database server's
 * clock, a reference all hosts share; the supervisor logs it.
 *
 * Concurrency. READ COMMITTED transactions, all short. Claims and sweeps pick
 * rows with FOR NO KEY UPDATE SKIP LOCKED (never waiting, never sharing a
 * row); every outcome reads its facts with FOR NO KEY UPDATE, where SQLite
 * relies on its IMMEDIATE write lock, and writes with the same
 * (id, lease_token, status) compare-and-swap. Rows a transaction locks
 * several at a time are locked in id order, so heartbeats, settlements and a
 * supervisor's take-back never deadlock; a deadlock or serialization failure
 * the server reports anyway reruns the whole transaction. NO KEY UPDATE (not
 * UPDATE) locks leave the key alone: inserting an event or attempt that
 * references a locked job never waits.
 */
import type pg from 'pg';
import type { Clock } from '../../clock.js';
import {
  claimedJobs,
  EVENTS,
  fenced,
  LOST,
  planRecovery,
  planRelease,
  planSettlement,
  recoveredJob,
  settleResult,
  type ClaimedRow,
  type HeldFacts,
  type OutcomePlan,
  type PlannedEvent,
} from '../outcomes.js';
import type {
  AttemptRow,
  CancelOutcome,
  ClaimedJob,
  ClaimRequest,
  ClassErrorCount,
  ClassStatusCount,
  DatabaseSize,
  ErrorCount,
  EventRow,
  InFlightJob,
  InsertedJob,
  JobListFilter,
  JobRow,
  LeaseRef,
  LeaseStatus,
  NewJob,
  RecoveredJob,
  RecoverParams,
  RetryBucket,
  RetryOutcome,
  Settlement,
  SettleResult,
  StatusCount,
  Store,
  TerminalStatus,
  WorkerHeartbeat,
  WorkerRegistration,
  WorkerRow,
  WorkerState,
} from '../types.js';
import { changes, clientConfig, first, inTransaction, openPool, parsePostgresUrl, rows, type Db, type PostgresTarget } from './connection.js';
import { runPostgresMigrations } from './migrations.js';
import { HISTORY_SQL } from './sql/history.js';
import { INTEGRITY_SQL } from './sql/integrity.js';
import { JOB_SQL } from './sql/jobs.js';
import { LEASE_SQL } from './sql/leases.js';
import { NOTIFY_SQL } from './sql/notify.js';
import { RETENTION_SQL } from './sql/retention.js';
import { STATS_SQL } from './sql/stats.js';
import { WORKER_SQL } from './sql/workers.js';
import { listenForJobs } from './subscription.js';

/** Round trips clockOffsetMs() makes, keeping the shortest. */
const CLOCK_SAMPLES = 3;

/** Bulk inserts go in chunks: bounded statements, whatever the batch. */
const INSERT_CHUNK_JOBS = 500;
const INSERT_CHUNK_BYTES = 8 * 1024 * 1024;

export interface PostgresStoreOptions {
  /** postgres:// or postgresql:// URL; `?schema=` and `?clock_skew_ms=` are read by leasehold. */
  database: string;
  clock: Clock;
}

const leaseKey = (id: number, leaseToken: string) => `${id}:${leaseToken}`;

export class PostgresStore implements Store {
  readonly driver = 'postgres' as const;
  private closing: Promise<void> | undefined;
  /** Stop functions of the subscriptions still listening: close() ends them too. */
  private readonly listening = new Set<() => Promise<void>>();

  private constructor(
    private readonly pool: pg.Pool,
    private readonly target: PostgresTarget,
    private readonly clock: Clock,
  ) {}

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

  /** The schema this store lives in (null: the server's default search_path). */
  get schema(): string | null {
    return this.target.schema;
  }

  /** How long past a lease's end the sweeper waits before taking it back. */
  get clockSkewMs(): number {
    return this.target.clockSkewMs;
  }

  /**
   * The database server's clock minus this process's, in ms (the supervisor
   * warns past half the lease slack). Read at the midpoint of a round trip, the
   * shortest of a few (the first may include opening a connection).
   */
  async clockOffsetMs(): Promise<number> {
    let best: { roundTripMs: number; offsetMs: number } | undefined;
    for (let sample = 0; sample < CLOCK_SAMPLES; sample++) {
      const before = this.clock.now();
      const row = await first<{ now: number }>(this.pool, STATS_SQL.serverNow);
      const after = this.clock.now();
      if (row === undefined) continue;
      const measured = { roundTripMs: after - before, offsetMs: row.now - Math.round((before + after) / 2) };
      if (best === undefined || measured.roundTripMs < best.roundTripMs) best = measured;
    }
    return best?.offsetMs ?? 0;
  }

  async migrate(): Promise<void> {
    await runPostgresMigrations(this.pool, this.target.schema, this.clock.now());
  }

  /** Safe twice; waits for the queries in flight and ends the subscriptions. */
  async close(): Promise<void> {
    this.closing ??= Promise.allSettled([...this.listening].map((stop) => stop())).then(() => this.pool.end());
    await this.closing;
  }

  private write<T>(work: (db: pg.PoolClient, now: number) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, (db) => work(db, this.clock.now()));
  }

  /** Append to the timeline, in order, in one statement. */
  private async record(db: Db, events: PlannedEvent[], statement = HISTORY_SQL.eventInsertMany): Promise<void> {
    if (events.length === 0) return;
    const column = <K extends keyof PlannedEvent>(key: K) => events.map((event) => event[key]);
    await changes(db, statement, [column('jobId'), column('ts'), column('event'), column('actor'), column('detail')]);
  }

  /** The other half of every fenced write: say in the timeline that stale holders were turned away (no event for a job that is gone). */
  private async recordZombies(db: Db, events: PlannedEvent[]): Promise<void> {
    await this.record(db, events, HISTORY_SQL.eventInsertIfJob);
  }

  private async rejectZombie(db: Db, ref: LeaseRef, now: number, operation: string): Promise<typeof LOST> {
    await this.recordZombies(db, [EVENTS.zombie(ref, now, operation)]);
    return LOST;
  }


  /** Inside the transaction: wake the idle workers of these classes when it commits. */
  private async notify(db: Db, classes: Iterable<string>): Promise<void> {
    const distinct = [...new Set(classes)];
    if (distinct.length > 0) await rows(db, NOTIFY_SQL.jobsAvailable, [distinct]);
  }

  // producers and operators

  async jobInsert(params: { jobs: NewJob[]; actor: string }): Promise<InsertedJob[]> {
    return this.write(async (db, now) => {
      const inserted: InsertedJob[] = [];
      for (const chunk of insertChunks(params.jobs)) {
        inserted.push(...(chunk.keyed ? [await this.insertKeyed(db, chunk.jobs[0]!, now)] : await this.insertUnkeyed(db, chunk.jobs, now)));
      }
      const created = params.jobs.flatMap((job, index) => (inserted[index]!.created ? [{ job, id: inserted[index]!.id }] : []));
      await this.record(db, created.map(({ job, id }) => EVENTS.enqueued(id, job, now, params.actor)));
      await this.notify(db, created.map(({ job }) => job.class));
      return inserted;
    });
  }

  private async insertUnkeyed(db: Db, jobs: NewJob[], now: number): Promise<InsertedJob[]> {
    const column = <K extends keyof NewJob>(key: K) => jobs.map((job) => job[key]);
    const bind = [now, column('class'), column('priority'), column('payload'), column('runAt'), column('maxRetries')];
    const ids = (await rows<{ id: number }>(db, JOB_SQL.insertMany, bind)).map((row) => row.id).sort((a, b) => a - b);
    return ids.map((id) => ({ id, created: true }));
  }

  /**
   * Insert, or find the job that holds the key already (committed by another
   * producer, who is waited for, or inserted earlier in this batch). A holder
   * deleted between the two statements (retention) frees the key: try again.
   */
  private async insertKeyed(db: Db, job: NewJob, now: number): Promise<InsertedJob> {
    const bind = [job.class, job.payload, job.priority, job.runAt, job.maxRetries, job.idempotencyKey, now];
    for (let attempt = 0; attempt < 3; attempt++) {
      const created = await first<{ id: number }>(db, JOB_SQL.insertKeyed, bind);
      if (created !== undefined) return { id: created.id, created: true };
      const existing = await first<{ id: number }>(db, JOB_SQL.findByKey, [job.class, job.idempotencyKey]);
      if (existing !== undefined) return { id: existing.id, created: false };
    }
    throw new Error(`idempotency key of class ${job.class} kept conflicting with a job that then vanished`);
  }

  async jobGet(params: { id: number }): Promise<JobRow | undefined> {
    return first<JobRow>(this.pool, JOB_SQL.get, [params.id]);
  }

  async jobList(params: JobListFilter): Promise<JobRow[]> {
    const { status, limit } = params;
    const jobClass = params.class;
    if (status !== undefined && jobClass !== undefined) return rows<JobRow>(this.pool, JOB_SQL.listByClassStatus, [jobClass, status, limit]);
    if (status !== undefined) return rows<JobRow>(this.pool, JOB_SQL.listByStatus, [status, limit]);
    if (jobClass !== undefined) return rows<JobRow>(this.pool, JOB_SQL.listByClass, [jobClass, limit]);
    return rows<JobRow>(this.pool, JOB_SQL.listAll, [limit]);
  }

  async attemptList(params: { jobId: number }): Promise<AttemptRow[]> {
    return rows<AttemptRow>(this.pool, HISTORY_SQL.attemptList, [params.jobId]);
  }

  async eventList(params: { jobId: number }): Promise<EventRow[]> {
    return rows<EventRow>(this.pool, HISTORY_SQL.eventList, [params.jobId]);
  }

  async jobCancel(params: { id: number; actor: string }): Promise<CancelOutcome> {
    return this.write(async (db, now): Promise<CancelOutcome> => {
      const job = await first<{ status: JobRow['status']; owner_id: string | null }>(db, JOB_SQL.lockForCancel, [params.id]);
      if (job === undefined) return 'not_found';
      if (job.status === 'QUEUED' && (await changes(db, JOB_SQL.cancelQueued, [params.id, now])) === 1) {
        await this.record(db, [EVENTS.cancelledQueued(params.id, now, params.actor)]);
        return 'cancelled';
      }
      if (job.status !== 'CLAIMED' && job.status !== 'RUNNING') return 'terminal';
      if ((await changes(db, JOB_SQL.requestCancel, [params.id, now])) === 0) return 'already_requested';
      await this.record(db, [EVENTS.cancelRequested(params.id, now, params.actor, job.owner_id)]);
      return 'cancel_requested';
    });
  }

  async jobRetry(params: { id: number; actor: string }): Promise<RetryOutcome> {
    return this.write(async (db, now): Promise<RetryOutcome> => {
      const retried = await rows<{ id: number; class: string }>(db, JOB_SQL.retryFailed, [now, params.id]);
      if (retried.length === 0) return (await first(db, JOB_SQL.exists, [params.id])) === undefined ? 'not_found' : 'not_failed';
      await this.requeuedByOperator(db, retried, now, params.actor);
      return 'queued';
    });
  }

  async jobRetryFailed(params: { class?: string; actor: string }): Promise<number> {
    return this.write(async (db, now) => {
      const retried =
        params.class === undefined
          ? await rows<{ id: number; class: string }>(db, JOB_SQL.retryAllFailed, [now])
          : await rows<{ id: number; class: string }>(db, JOB_SQL.retryClassFailed, [now, params.class]);
      await this.requeuedByOperator(db, retried, now, params.actor);
      return retried.length;
    });
  }

  private async requeuedByOperator(db: Db, jobs: { id: number; class: string }[], now: number, actor: string): Promise<void> {
    await this.record(db, jobs.map(({ id }) => EVENTS.manualRetry(id, now, actor)));
    await this.notify(db, jobs.map((job) => job.class));
  }


  // workers


  /**
   * Inside a transaction: claim up to `limit` due jobs, each with its own
   * token and attempt row; their CLAIMED events are returned for the caller
   * to record (with a batch's other events, in one statement).
   */
  private async claim(db: Db, params: ClaimRequest, now: number): Promise<{ jobs: ClaimedJob[]; events: PlannedEvent[] }> {
    if (params.classes.length === 0 || params.limit < 1) return { jobs: [], events: [] };
    const [statement, classes] = params.classes.length === 1 ? [LEASE_SQL.claimOneClass, params.classes[0]] : [LEASE_SQL.claimManyClasses, params.classes];
    const claimed = await rows<ClaimedRow>(db, statement, [classes, params.ownerId, now, now + params.leaseMs, params.limit]);
    return { jobs: claimedJobs(claimed), events: claimed.map((row) => EVENTS.claimed(row, now, params.ownerId)) };
  }

  async jobStart(params: LeaseRef & { leaseMs: number; startedAt?: number }): Promise<void> {
    const outcome = await this.write(async (db, now) => {
      const startedAt = params.startedAt ?? now;
      const row = await first<{ attempts: number }>(db, LEASE_SQL.start, [params.id, params.leaseToken, startedAt, now, now + params.leaseMs]);
      if (row === undefined) return this.rejectZombie(db, params, now, 'start');
      await this.record(db, [EVENTS.started(params.id, row.attempts, startedAt)]);
      return undefined;
    });
    fenced(params, 'start', outcome);
  }


  async leasesExtend(params: { leases: LeaseRef[]; leaseMs: number }): Promise<LeaseStatus[]> {
    if (params.leases.length === 0) return [];
    return this.write(async (db, now) => {
      const bind = [params.leases.map((ref) => ref.id), params.leases.map((ref) => ref.leaseToken), now, now + params.leaseMs];
      type Renewed = { id: number; lease_token: string; lease_expires_at: number; cancel_requested_at: number | null };
      const renewed = new Map((await rows<Renewed>(db, LEASE_SQL.extendMany, bind)).map((row) => [leaseKey(row.id, row.lease_token), row]));
      const lost: PlannedEvent[] = [];
      const statuses = params.leases.map((ref): LeaseStatus => {
        const row = renewed.get(leaseKey(ref.id, ref.leaseToken));
        if (row === undefined) {
          lost.push(EVENTS.zombie(ref, now, 'heartbeat'));
          return { id: ref.id, held: false };
        }
        return { id: ref.id, held: true, leaseExpiresAt: row.lease_expires_at, cancelRequested: row.cancel_requested_at !== null };
      });
      await this.recordZombies(db, lost);
      return statuses;
    });
  }

  async jobProgress(params: LeaseRef & { progress: string }): Promise<void> {
    const outcome = await this.write(async (db, now) =>
      (await changes(db, LEASE_SQL.progress, [params.id, params.leaseToken, params.progress])) === 1
        ? undefined
        : this.rejectZombie(db, params, now, 'progress'),
    );
    fenced(params, 'progress', outcome);
  }

  async jobsSettle(params: { settlements: Settlement[]; claim?: ClaimRequest }): Promise<{ settled: SettleResult[]; claimed: ClaimedJob[] }> {
    return this.write(async (db, now) => {
      const settled = await this.settle(db, params.settlements, now);
      const claimed = params.claim === undefined ? { jobs: [], events: [] } : await this.claim(db, params.claim, now);
      await this.record(db, [...settled.events, ...claimed.events]);
      return { settled: settled.results, claimed: claimed.jobs };
    });
  }

  /**
   * Inside a transaction: write each verdict, fenced by its lease. The held
   * rows are read and locked first, all at once in id order; a settlement
   * whose lease is not among them (or that repeats one already settled in
   * this batch) is a stale write: recorded, reported held: false.
   */
  private async settle(db: Db, settlements: Settlement[], now: number): Promise<{ results: SettleResult[]; events: PlannedEvent[] }> {
    if (settlements.length === 0) return { results: [], events: [] };
    const bind = [settlements.map((s) => s.id), settlements.map((s) => s.leaseToken)];
    const held = new Map((await rows<HeldFacts>(db, LEASE_SQL.heldFactsMany, bind)).map((facts) => [leaseKey(facts.id, facts.lease_token), facts]));
    const plans: OutcomePlan[] = [];
    const stale: PlannedEvent[] = [];
    const results = settlements.map((settlement): SettleResult => {
      const key = leaseKey(settlement.id, settlement.leaseToken);
      const facts = held.get(key);
      if (facts === undefined) {
        stale.push(EVENTS.zombie(settlement, now, settlement.verdict.type));
        return { id: settlement.id, held: false };
      }
      held.delete(key);
      const plan = planSettlement(settlement, facts, now);
      plans.push(plan);
      return settleResult(plan);
    });
    await this.writeOutcomes(db, plans, now);
    await this.recordZombies(db, stale);
    return { results, events: plans.flatMap((plan) => plan.events) };
  }

  /** Inside a transaction: run outcome plans and record their events; the caller read (and locked) their facts. */
  private async apply(db: Db, plans: OutcomePlan[], now: number): Promise<void> {
    await this.writeOutcomes(db, plans, now);
    await this.record(db, plans.flatMap((plan) => plan.events));
  }

  /** The fenced row writes of outcome plans: the successes in one statement, the rest one by one. */
  private async writeOutcomes(db: Db, plans: OutcomePlan[], now: number): Promise<void> {
    const successes = plans.flatMap((plan) => (plan.job.type === 'complete' ? [{ plan, result: plan.job.result }] : []));
    if (successes.length > 0) {
      const column = <T>(pick: (plan: OutcomePlan) => T) => successes.map(({ plan }) => pick(plan));
      await changes(db, LEASE_SQL.completeMany, [
        column((p) => p.id),
        column((p) => p.leaseToken),
        column((p) => p.startedAt),
        column((p) => p.attempt),
        column((p) => p.attemptEnd.status),
        column((p) => p.attemptEnd.code),
        column((p) => p.attemptEnd.detail),
        successes.map(({ result }) => result),
        now,
      ]);
    }
    for (const plan of plans) {
      const { status, code, detail } = plan.attemptEnd;
      const shared = [plan.id, plan.leaseToken, plan.startedAt, now, plan.attempt, status, code, detail];
      const job = plan.job;
      switch (job.type) {
        case 'complete':
          break; // written above
        case 'requeue':
          await changes(db, LEASE_SQL.requeue, [...shared, job.runAt]);
          break;
        case 'finishBadly':
          await changes(db, LEASE_SQL.finishBadly, [...shared, job.status]);
          break;
        case 'release':
          await changes(db, LEASE_SQL.release, shared);
          break;
      }
    }
  }

  // the sweeper and the supervisor

  async jobListHeldBy(params: { ownerId: string }): Promise<JobRow[]> {
    return rows<JobRow>(this.pool, LEASE_SQL.heldRowsByOwner, [params.ownerId]);
  }

  /** Leases that ran out more than clockSkewMs ago; several sweepers at once each take different jobs. */
  async leasesRecoverExpired(params: RecoverParams & { limit: number }): Promise<RecoveredJob[]> {
    return this.write(async (db, now) => {
      const expired = await rows<HeldFacts>(db, LEASE_SQL.expired, [now - this.target.clockSkewMs, params.limit]);
      return this.recoverRows(db, expired, (row) => planRecovery(row, params, now, false), now);
    });
  }

  async leasesRecoverByOwner(params: RecoverParams & { ownerId: string; startedJobIds?: number[] }): Promise<RecoveredJob[]> {
    const started = new Set(params.startedJobIds);
    return this.write(async (db, now) => {
      const held = await rows<HeldFacts>(db, LEASE_SQL.heldByOwner, [params.ownerId]);
      return this.recoverRows(db, held, (row) => planRecovery(row, params, now, started.has(row.id)), now);
    });
  }

  async leasesReleaseByOwner(params: { ownerId: string; actor: string; reason: string }): Promise<RecoveredJob[]> {
    return this.write(async (db, now) => {
      const held = await rows<HeldFacts>(db, LEASE_SQL.heldByOwner, [params.ownerId]);
      return this.recoverRows(db, held, (row) => planRelease(row, now, params.actor, params.reason), now);
    });
  }

  /** Inside a transaction: take back locked held rows, each as `plan` says. */
  private async recoverRows(db: Db, held: HeldFacts[], plan: (row: HeldFacts) => OutcomePlan, now: number): Promise<RecoveredJob[]> {
    const plans = held.map(plan);
    await this.apply(db, plans, now);
    return held.map((row, index) => recoveredJob(row, plans[index]!));
  }


  /**
   * Wake-ups: `onJob` runs soon after a job of one of `classes` is enqueued
   * or retried by an operator (on commit). A hint: claim as usual, and keep a
   * slow poll, since notifications sent while the listening connection was
   * down are lost. A broken connection is reported to `onError` and opened
   * again with backoff; `onJob` runs when it breaks and once it listens again.
   * With `listen=off` in the URL nothing listens: workers only poll.
   */
  async subscribe(classes: string[], onJob: () => void, onError?: (error: Error) => void): Promise<() => Promise<void>> {
    if (!this.target.listen) return async () => undefined;
    const stopListening = await listenForJobs(clientConfig(this.target), classes, onJob, onError);
    const stop = async () => {
      this.listening.delete(stop);
      await stopListening();
    };
    this.listening.add(stop);
    return stop;
  }

  // worker registry

  async workerRegister(params: WorkerRegistration): Promise<void> {
    const { id, kind, host, supervisorId, pid, state, restarts } = params;
    await this.write((db, now) => changes(db, WORKER_SQL.insert, [id, kind, host, supervisorId, pid, params.class, state, restarts, now]));
  }

  async workerHeartbeat(params: WorkerHeartbeat): Promise<void> {
    await this.write((db, now) =>
      changes(db, WORKER_SQL.heartbeat, [
        params.id,
        now,
        params.state ?? null,
        params.cpuPercent ?? null,
        params.memoryBytes ?? null,
        params.jobId !== undefined,
        params.jobId ?? null,
      ]),
    );
  }

  async workerExit(params: { id: string; state: WorkerState; exitCode: number | null; exitSignal: string | null }): Promise<void> {
    await this.write((db, now) => changes(db, WORKER_SQL.exit, [params.id, params.state, params.exitCode, params.exitSignal, now]));
  }

  async workerList(params: { includeExited: boolean; limit: number }): Promise<WorkerRow[]> {
    return rows<WorkerRow>(this.pool, params.includeExited ? WORKER_SQL.listAll : WORKER_SQL.listLive, [params.limit]);
  }

  async workerListLiveOnHost(params: { host: string }): Promise<WorkerRow[]> {
    return rows<WorkerRow>(this.pool, WORKER_SQL.liveOnHost, [params.host]);
  }

  // operators: stats and retention

  async statsCounts(): Promise<ClassStatusCount[]> {
    return rows<ClassStatusCount>(this.pool, STATS_SQL.countsByClassStatus);
  }

  async statsInFlight(params: { limit: number }): Promise<InFlightJob[]> {
    return rows<InFlightJob>(this.pool, STATS_SQL.inFlightOldest, [params.limit]);
  }

  async statsRetries(params: { since: number }): Promise<RetryBucket[]> {
    return rows<RetryBucket>(this.pool, STATS_SQL.retryDistribution, [params.since]);
  }

  async statsTopErrors(params: { since: number; limit: number }): Promise<ErrorCount[]> {
    return rows<ErrorCount>(this.pool, STATS_SQL.topErrors, [params.since, params.limit]);
  }

  async statsTopErrorsByClass(params: { since: number; limit: number }): Promise<ClassErrorCount[]> {
    return rows<ClassErrorCount>(this.pool, STATS_SQL.topErrorsByClass, [params.since, params.limit]);
  }

  async statsFinishedSince(params: { since: number }): Promise<StatusCount[]> {
    return rows<StatusCount>(this.pool, STATS_SQL.finishedSince, [params.since]);
  }

  async statsZombieWrites(): Promise<number> {
    return (await first<{ count: number }>(this.pool, STATS_SQL.zombieWrites))?.count ?? 0;
  }

  async databaseSize(): Promise<DatabaseSize> {
    const row = await first<{ bytes: number; page_size: number }>(this.pool, STATS_SQL.databaseSize);
    const bytes = row?.bytes ?? 0;
    const pageSize = row?.page_size ?? 8192;
    return { bytes, pageCount: Math.ceil(bytes / pageSize), pageSize, freePages: 0 };
  }

  async schemaVersion(): Promise<number> {
    return (await first<{ version: number }>(this.pool, STATS_SQL.schemaVersion))?.version ?? 0;
  }

  async ping(): Promise<void> {
    await first(this.pool, STATS_SQL.ping);
  }

  async integrityCheck(): Promise<string[]> {
    const orphans = (await rows<{ child: string; job_id: number }>(this.pool, INTEGRITY_SQL.orphans)).map(
      (row) => `${row.child} row of job ${row.job_id} has no jobs parent`,
    );
    const gaps = (await rows<{ id: number; attempts: number; rows: number; highest: number }>(this.pool, INTEGRITY_SQL.attemptGaps)).map(
      (row) => `job ${row.id}: attempts ${row.attempts} but ${row.rows} attempt rows up to ${row.highest}`,
    );
    return [...orphans, ...gaps];
  }

  async jobsPruneCount(params: { status: TerminalStatus; finishedBefore: number }): Promise<number> {
    return (await first<{ count: number }>(this.pool, RETENTION_SQL.countOlder, [params.status, params.finishedBefore]))?.count ?? 0;
  }

  async jobsPruneBatch(params: { status: TerminalStatus; finishedBefore: number; limit: number }): Promise<number> {
    if (params.limit < 1) return 0;
    return this.write((db) => changes(db, RETENTION_SQL.deleteOlderBatch, [params.status, params.finishedBefore, params.limit]));
  }
}

/** Consecutive jobs without a key go in bulk chunks; a keyed job goes alone (it may match an existing one). */
function* insertChunks(jobs: NewJob[]): Generator<{ keyed: boolean; jobs: NewJob[] }> {
  let bulk: NewJob[] = [];
  let bytes = 0;
  for (const job of jobs) {
    if (job.idempotencyKey !== null || bulk.length >= INSERT_CHUNK_JOBS || bytes >= INSERT_CHUNK_BYTES) {
      if (bulk.length > 0) yield { keyed: false, jobs: bulk };
      bulk = [];
      bytes = 0;
    }
    if (job.idempotencyKey !== null) {
      yield { keyed: true, jobs: [job] };
      continue;
    }
    bulk.push(job);
    bytes += job.payload.length;
  }
  if (bulk.length > 0) yield { keyed: false, jobs: bulk };
}
