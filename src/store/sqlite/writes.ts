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
import { withBusyRetry, type SqliteDb } from './connection.js';
import type { WriteTurns } from '../write-turns.js';
import { MultiRowInserter } from './multi-row.js';
import { SqliteReads } from './reads.js';
import { HISTORY_INSERTS } from './sql/history.js';
import { rollUp } from './stats-rollup.js';
import { wrongDriver, type ApplicationDatabase, type SyncProducer } from '../within.js';
import { applicationProducer } from './application-database.js';
import { insertJobs } from './inserts.js';
import { settleDependents, type EndedJob } from './flows.js';

/**
 * The SQLite driver's way of writing, and its writes that are not about a
 * held job: producers', operators', the worker registry's, retention's and
 * the stats rollup's (the lease protocol: store.ts). better-sqlite3 is
 * synchronous; every write is one IMMEDIATE transaction (the write lock is
 * taken up front, so two writers never deadlock upgrading a read lock),
 * retried on SQLITE_BUSY, and writes take turns (`write`).
 */
export abstract class SqliteWrites extends SqliteReads {
  /** One IMMEDIATE transaction wrapper, built once: `write` runs each operation's body inside it. */
  private readonly transaction: (work: (now: number) => unknown, now: number) => unknown;
  private readonly eventRows: MultiRowInserter;
  /** The timeline rows the transaction in progress planned, inserted together before it commits. */
  private pendingEvents: PlannedEvent[] = [];
  /** The last write in line (see `write`). */
  private writes: Promise<unknown> = Promise.resolve();

  protected constructor(
    db: SqliteDb,
    clock: Clock,
    /** The turns this process's writes take with the others' (write-turns.ts); none: the busy timeout alone. */
    protected readonly turns?: WriteTurns,
  ) {
    super(db, clock);
    this.eventRows = new MultiRowInserter(db, HISTORY_INSERTS.events);
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

  /**
   * Writes take turns, within the process and, with `turns`, with the
   * other processes of the queue. Each try may wait up to the busy timeout
   * inside SQLite, blocking the event loop; with several writes waiting out
   * a lock at once those waits added up to seconds without a turn for IPC
   * (a child that cannot answer a ping is killed as blocked). In turn, one
   * waits and the rest wait with the loop free.
   */
  protected write<T>(work: (now: number) => T): Promise<T> {
    const turn = this.writes.then(() => withBusyRetry(() => this.transaction(work, this.clock.now()) as T, this.turns));
    this.writes = turn.catch(() => undefined);
    return turn;
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
    return insertJobs(this.jobs, this.flows, jobs, actor, now, (event) => this.record(event));
  }

  /** Inside the transaction that ended these jobs: their WAITING dependents move (./flows.ts). */
  protected ended(jobs: readonly EndedJob[], now: number): void {
    settleDependents(this.flows, jobs, now, (event) => this.record(event));
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
