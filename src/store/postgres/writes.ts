import type pg from 'pg';
import { EVENTS, FLOW_ACTOR } from '../timeline.js';
import { cancelQueuedStatement, failedStatement, failedValues, inBatches } from '../job-filters.js';
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
import { changes, first, inOneStatement, inTransaction, rows, type Db } from './connection.js';
import { insertAnnounced } from './inserts.js';
import { PostgresReads } from './reads.js';
import { reviveDependents } from './revive.js';
import { record } from './settlement.js';
import { CLASS_SQL } from './sql/classes.js';
import { insertAnnouncedIn, JOB_SQL } from './sql/jobs.js';
import { NOTIFY_SQL } from './sql/notify.js';
import { RETENTION_SQL } from './sql/retention.js';
import { SCHEDULE_SQL } from './sql/schedules.js';
import { WORKER_SQL } from './sql/workers.js';
import { rollUp, rollUpDue } from './stats-rollup.js';
import { wrongDriver, type ApplicationClient } from '../within.js';
import { checkApplicationClient } from './within.js';

/**
 * The PostgreSQL driver's writes that are not about a held job: producers',
 * operators', the worker registry's, retention's and the stats rollup's (the
 * lease protocol: store.ts). Each is one short READ COMMITTED transaction
 * (`write`); an enqueue, a retry or a resume wakes the idle workers of its
 * classes when it commits (`notify`).
 */
export abstract class PostgresWrites extends PostgresReads {
  protected write<T>(work: (db: pg.PoolClient, now: number) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, (db) => work(db, this.clock.now()));
  }

  /** A write that is one statement: no BEGIN and COMMIT round trips. */
  protected oneStatement<T>(work: (db: pg.PoolClient, now: number) => Promise<T>): Promise<T> {
    return inOneStatement(this.pool, (db) => work(db, this.clock.now()));
  }

  /** Inside the transaction: wake the idle workers of these classes when it commits. */
  private async notify(db: Db, classes: Iterable<string>): Promise<void> {
    const distinct = [...new Set(classes)];
    if (distinct.length > 0) await rows(db, NOTIFY_SQL.jobsAvailable, [distinct]);
  }

  // producers and operators

  async jobInsert(params: { jobs: NewJob[]; actor: string }): Promise<InsertedJob[]> {
    return this.write((db, now) => insertAnnounced(db, JOB_SQL.insertAnnounced, params.jobs, params.actor, now));
  }

  /**
   * One statement on the application's client: its function runs in a block
   * of its own (a savepoint) and names the queue's schema, so the
   * application's transaction stays usable after a failure, and its
   * search_path does not matter.
   */
  async jobInsertWithin(params: { tx: ApplicationClient; jobs: NewJob[]; actor: string }): Promise<InsertedJob[]> {
    checkApplicationClient(params.tx);
    const statement = insertAnnouncedIn(this.schema);
    // The shape ApplicationClient names is a pg.ClientBase's.
    const client = params.tx as unknown as pg.ClientBase;
    return insertAnnounced(client, statement, params.jobs, params.actor, this.clock.now());
  }

  onApplicationDatabase(): never {
    throw wrongDriver('postgres');
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
      const jobs = await insertAnnounced(db, JOB_SQL.insertAnnounced, params.jobs, params.actor, now);
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
      if (
        (job.status === 'QUEUED' || job.status === 'WAITING') &&
        (await changes(db, JOB_SQL.cancelQueued, [params.id, now])) === 1
      ) {
        await record(db, [EVENTS.cancelledQueued(params.id, now, params.actor, job.status)]);
        await this.cancelledDependents(db, [params.id], now);
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
      await reviveDependents(db, [params.id], now);
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
        await reviveDependents(
          db,
          retried.map(({ id }) => id),
          now,
        );
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
          cancelled.map(({ id }) => EVENTS.cancelledQueued(id, now, params.actor, 'QUEUED')),
        );
        await this.cancelledDependents(
          db,
          cancelled.map(({ id }) => id),
          now,
        );
        return cancelled.length;
      }),
    );
  }

  /** Jobs an operator cancelled hand that end to their dependents, in the same transaction. */
  private async cancelledDependents(db: Db, ids: number[], now: number): Promise<void> {
    if (ids.length > 0) await rows(db, JOB_SQL.afterOutcomes, [ids, ids.map(() => 'CANCELLED'), now, FLOW_ACTOR]);
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
    return this.oneStatement(async (db, now) =>
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
    await this.oneStatement((db, now) =>
      changes(db, CLASS_SQL.disable, [params.supervisorId, params.class, params.reason, now]),
    );
  }

  async classDisabledClear(params: { supervisorId: string; class?: string }): Promise<void> {
    const [statement, values] =
      params.class === undefined
        ? [CLASS_SQL.enableAll, [params.supervisorId]]
        : [CLASS_SQL.enable, [params.supervisorId, params.class]];
    await this.oneStatement((db) => changes(db, statement, values));
  }

  // worker registry

  async workerRegister(params: WorkerRegistration): Promise<void> {
    const { id, kind, host, supervisorId, pid, state, restarts } = params;
    await this.oneStatement((db, now) =>
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
    await this.oneStatement((db, now) => changes(db, WORKER_SQL.heartbeat, values(now)));
  }

  async workerExit(params: WorkerExit): Promise<void> {
    await this.oneStatement((db, now) =>
      changes(db, WORKER_SQL.exit, [params.id, params.state, params.exitCode, params.exitSignal, now]),
    );
  }

  // retention and the stats rollup

  async jobsPruneBatch(params: { status: TerminalStatus; finishedBefore: number; limit: number }): Promise<number> {
    if (params.limit < 1) return 0;
    return this.oneStatement((db) =>
      changes(db, RETENTION_SQL.deleteOlderBatch, [params.status, params.finishedBefore, params.limit]),
    );
  }

  async statsRollUp(params: { maxMinutes: number }): Promise<number> {
    if (!(await rollUpDue(this.pool, this.clock.now(), params.maxMinutes))) return 0;
    return this.write((db, now) => rollUp(db, now, params.maxMinutes));
  }
}
