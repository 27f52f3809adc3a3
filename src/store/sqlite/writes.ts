import type { Clock } from '../../clock.js';
import { EVENTS, type PlannedEvent } from '../timeline.js';
import { cancelQueuedStatement, failedStatement, inBatches } from '../job-filters.js';
import type {
  BulkBounds,
  CancelOutcome,
  FailedFilter,
  InsertedJob,
  JobRow,
  NewJob,
  PauseOutcome,
  ResumeOutcome,
  RetryOutcome,
  TerminalStatus,
  WorkerExit,
  WorkerHeartbeat,
  WorkerRegistration,
} from '../types.js';
import type { ScheduleAdvance, ScheduleAdvanceResult } from '../schedules.js';
import { isBusyError, withBusyRetry, type SqliteDb } from './connection.js';
import { MultiRowInserter } from './multi-row.js';
import { SqliteReads } from './reads.js';
import { HISTORY_INSERTS } from './sql/history.js';
import { rollUp } from './stats-rollup.js';
import { wrongDriver, type ApplicationDatabase, type SyncProducer } from '../within.js';
import { applicationProducer } from './application-database.js';
import { insertJobs, type JobInserts } from './inserts.js';
import { PLAIN_JOB_INSERT } from './sql/jobs.js';
import { reviveDependents, settleDependents, type EndedJob } from './flows.js';

/** A write waiting for its batch: its body, run inside the transaction, and its caller's promise. */
interface QueuedWrite {
  work: (now: number) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type WriteOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * The SQLite driver's way of writing, and its writes that are not about a
 * held job: producers', operators', the worker registry's, retention's and
 * the stats rollup's (the lease protocol: store.ts). better-sqlite3 is
 * synchronous; writes are batched into IMMEDIATE transactions (the write
 * lock is taken up front, so two writers never deadlock upgrading a read
 * lock), retried on SQLITE_BUSY (`write`).
 */
export abstract class SqliteWrites extends SqliteReads {
  /** One IMMEDIATE transaction for a batch of writes, built once (see `write`). */
  private readonly transaction: (batch: readonly QueuedWrite[], now: number) => WriteOutcome[];
  private readonly eventRows: MultiRowInserter;
  private readonly inserts: JobInserts;
  /** The timeline rows the transaction in progress planned, inserted together before it commits. */
  private pendingEvents: PlannedEvent[] = [];
  /** Writes asked for and not yet begun (see `write`). */
  private queued: QueuedWrite[] = [];
  /** The batches being written, until none is queued. */
  private flushing: Promise<void> | undefined;

  protected constructor(db: SqliteDb, clock: Clock) {
    super(db, clock);
    this.eventRows = new MultiRowInserter(db, HISTORY_INSERTS.events);
    this.inserts = { jobs: this.jobs, flows: this.flows, plainRows: new MultiRowInserter(db, PLAIN_JOB_INSERT) };
    // Inside the batch's transaction, a SAVEPOINT: one write that throws takes back its own changes, no other's.
    const alone = db.transaction((work: (now: number) => unknown, now: number) => work(now));
    const wrapped = db.transaction((batch: readonly QueuedWrite[], now: number): WriteOutcome[] => {
      const outcomes =
        batch.length === 1
          ? [{ ok: true as const, value: batch[0]!.work(now) }]
          : batch.map(({ work }): WriteOutcome => {
              const planned = this.pendingEvents.length;
              try {
                return { ok: true, value: alone(work, now) };
              } catch (error) {
                this.pendingEvents.length = planned;
                return { ok: false, error };
              }
            });
      this.eventRows.run(this.pendingEvents.map((e) => [e.jobId, e.ts, e.event, e.actor, e.detail]));
      return outcomes;
    });
    this.transaction = (batch, now) => {
      this.pendingEvents = [];
      return wrapped.immediate(batch, now);
    };
  }

  /**
   * Group commit: every write asked for in one turn of the event loop (and
   * those asked while a batch commits) goes in one IMMEDIATE transaction,
   * each in its own savepoint, in the order asked; each caller hears its own
   * result or error. Batches go one at a time. A try may wait up to the busy
   * timeout inside SQLite, blocking the event loop: one batch waits, and
   * the writes behind it wait with the loop free.
   */
  protected write<T>(work: (now: number) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.flushing ??= this.flushQueued();
    });
  }

  private async flushQueued(): Promise<void> {
    // After this turn's I/O: what else arrived with it joins the batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0);
      try {
        await this.commit(batch);
      } catch (error) {
        if (isBusyError(error)) {
          // The lock stayed taken through every try: what queued meanwhile would wait as long. Each hears it now.
          for (const write of [...batch, ...this.queued.splice(0)]) write.reject(error);
        } else if (batch.length === 1) batch[0]!.reject(error);
        // The batch failed whole (its commit, on a full disk, say): each write alone meets its own fate.
        else for (const write of batch) await this.commit([write]).catch((alone: unknown) => write.reject(alone));
      }
    }
    this.flushing = undefined;
  }

  /** One batch in one transaction, tried again on a busy lock; each write hears its own outcome, or this throws. */
  private async commit(batch: readonly QueuedWrite[]): Promise<void> {
    const outcomes = await withBusyRetry(() => this.transaction(batch, this.clock.now()));
    outcomes.forEach((outcome, i) => (outcome.ok ? batch[i]!.resolve(outcome.value) : batch[i]!.reject(outcome.error)));
  }

  /** Inside a transaction: append to the timeline when the transaction's work is done. */
  protected record(event: PlannedEvent): void {
    this.pendingEvents.push(event);
  }

  // producers and operators

  async jobInsert(params: { jobs: NewJob[]; actor: string }): Promise<InsertedJob[]> {
    return this.write((now) => this.insertJobs(params.jobs, params.actor, now));
  }

  /** Inside a transaction: insert each job, or find the one that holds its idempotency key. */
  private insertJobs(jobs: NewJob[], actor: string, now: number): InsertedJob[] {
    return insertJobs(this.inserts, jobs, actor, now, (event) => this.record(event));
  }

  /** Inside the transaction that ended these jobs: their WAITING dependents move (./flows.ts). */
  protected ended(jobs: readonly EndedJob[], now: number): void {
    settleDependents(this.flows, jobs, now, (event) => this.record(event));
  }

  /** Inside the transaction that retried these FAILED jobs: the dependents their failure cancelled come back (./flows.ts). */
  private retried(ids: readonly number[], now: number): void {
    reviveDependents(this.flows, ids, now, (event) => this.record(event));
  }

  async jobInsertWithin(): Promise<never> {
    throw wrongDriver('sqlite');
  }

  onApplicationDatabase(tx: ApplicationDatabase): SyncProducer {
    return applicationProducer(this.db, tx, this.clock);
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
        this.record(EVENTS.cancelledQueued(params.id, now, params.actor, job.status as 'QUEUED' | 'WAITING'));
        this.ended([{ id: params.id, status: 'CANCELLED' }], now);
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
        this.retried([params.id], now);
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
        this.retried(
          rows.map(({ id }) => id),
          now,
        );
        return rows.length;
      }),
    );
  }

  async jobCancelQueued(params: { class?: string; actor: string } & BulkBounds): Promise<number> {
    const statement = this.jobs[cancelQueuedStatement(params)];
    return inBatches(params, (throughId, limit) =>
      this.write((now) => {
        const rows = statement.all({ now, class: params.class, throughId, limit }) as { id: number }[];
        for (const { id } of rows) this.record(EVENTS.cancelledQueued(id, now, params.actor, 'QUEUED'));
        this.ended(
          rows.map(({ id }) => ({ id, status: 'CANCELLED' })),
          now,
        );
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

  async workerExit(params: WorkerExit): Promise<void> {
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
