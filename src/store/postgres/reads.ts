import type pg from 'pg';
import type { Clock } from '../../clock.js';
import { blockingStart, windowLeftAt, windowStart } from '../rate-limit.js';
import type {
  AttemptRow,
  ChildCrash,
  ClassControl,
  ClassErrorCount,
  ClassOldestDue,
  ClassStatusCount,
  CostRanking,
  DatabaseSize,
  DisabledClass,
  ErrorCount,
  EventRow,
  JobLogRow,
} from '../types.js';
import type {
  FailedFilter,
  FinishedMinute,
  InFlightJob,
  JobListFilter,
  JobRow,
  RelatedJob,
  RateLimit,
  RateWindow,
  RetryBucket,
  StatusCount,
  TerminalStatus,
  WorkerRow,
} from '../types.js';
import { failedStatement, failedValues, FIRST_PAGE, jobListStatement, type JobListStatement } from '../job-filters.js';
import type { ScheduleRow } from '../schedules.js';
import {
  clientConfig,
  first,
  readPlannedWithValues,
  readInIndex,
  readInOneSnapshot,
  rows,
  type PostgresTarget,
} from './connection.js';
import { CLASS_SQL } from './sql/classes.js';
import { HISTORY_SQL } from './sql/history.js';
import { INTEGRITY_SQL } from './sql/integrity.js';
import { JOB_SQL } from './sql/jobs.js';
import { LEASE_SQL } from './sql/leases.js';
import { RETENTION_SQL } from './sql/retention.js';
import { SCHEDULE_SQL } from './sql/schedules.js';
import { STATS_SQL } from './sql/stats.js';
import { rolledMinutes } from './stats-rollup.js';
import { COST_TOP_KEPT, partValues, windowParts } from '../stats-window.js';
import { WORKER_SQL } from './sql/workers.js';
import { jobsChannel, listenOn, OUTCOMES, type ListenChannel } from './subscription.js';
import { OUTCOME_SQL } from './sql/outcome-events.js';
import { OUTCOMES_START, type OutcomeEventRow, type OutcomePosition } from '../outcome-rows.js';
import type { WakeWatch } from '../wake-watch.js';

/** Each list statement's values, in its parameters' order. */
const LIST_VALUES: Record<JobListStatement, (filter: JobListFilter, beforeId: number) => unknown[]> = {
  listAll: (f, beforeId) => [f.limit, beforeId],
  listByStatus: (f, beforeId) => [f.status, f.limit, beforeId],
  listByClass: (f, beforeId) => [f.class, f.limit, beforeId],
  listByClassStatus: (f, beforeId) => [f.class, f.status, f.limit, beforeId],
  listFailedByCode: (f, beforeId) => [f.errorCode, f.limit, beforeId],
  listFailedByClassCode: (f, beforeId) => [f.class, f.errorCode, f.limit, beforeId],
};

/**
 * The PostgreSQL driver's half that changes nothing: every read of every role, and the wake-ups (the writes:
 * writes.ts and store.ts).
 */
export abstract class PostgresReads {
  /** Stop functions of the subscriptions still listening: close() ends them too. */
  protected readonly listening = new Set<() => Promise<void>>();

  protected constructor(
    protected readonly pool: pg.Pool,
    protected readonly target: PostgresTarget,
    /** The store's time: the server's (./server-clock.ts), unless a test gives its own. */
    readonly clock: Clock,
  ) {}

  async jobGet(params: { id: number }): Promise<JobRow | undefined> {
    return first<JobRow>(this.pool, JOB_SQL.get, [params.id]);
  }

  async jobParents(params: { id: number }): Promise<RelatedJob[]> {
    return rows<RelatedJob>(this.pool, JOB_SQL.parentsOf, [params.id]);
  }

  async jobChildren(params: { id: number; limit: number }): Promise<RelatedJob[]> {
    return rows<RelatedJob>(this.pool, JOB_SQL.childrenOf, [params.id, params.limit]);
  }

  async jobChildCount(params: { id: number }): Promise<number> {
    return (await first<{ count: number }>(this.pool, JOB_SQL.countChildren, [params.id]))?.count ?? 0;
  }

  async jobList(params: JobListFilter): Promise<JobRow[]> {
    const statement = jobListStatement(params);
    if (statement === undefined) return [];
    const values = LIST_VALUES[statement](params, params.beforeId ?? FIRST_PAGE);
    return statement === 'listAll'
      ? rows<JobRow>(this.pool, JOB_SQL.listAll, values)
      : readPlannedWithValues<JobRow>(this.pool, JOB_SQL[statement], values);
  }

  async jobListByKey(params: { key: string; class?: string }): Promise<JobRow[]> {
    if (params.class === undefined) return rows<JobRow>(this.pool, JOB_SQL.listByKey, [params.key]);
    return rows<JobRow>(this.pool, JOB_SQL.listByClassKey, [params.class, params.key]);
  }

  async jobCountFailed(params: FailedFilter): Promise<number> {
    return (
      (await first<{ count: number }>(this.pool, JOB_SQL[failedStatement('count', params)], failedValues(params)))
        ?.count ?? 0
    );
  }

  async attemptList(params: { jobId: number }): Promise<AttemptRow[]> {
    return rows<AttemptRow>(this.pool, HISTORY_SQL.attemptList, [params.jobId]);
  }

  async eventList(params: { jobId: number }): Promise<EventRow[]> {
    return rows<EventRow>(this.pool, HISTORY_SQL.eventList, [params.jobId]);
  }

  async logList(params: { jobId: number }): Promise<JobLogRow[]> {
    return rows<JobLogRow>(this.pool, HISTORY_SQL.logList, [params.jobId]);
  }

  async jobListHeldBy(params: { ownerId: string }): Promise<JobRow[]> {
    return rows<JobRow>(this.pool, LEASE_SQL.heldRowsByOwner, [params.ownerId]);
  }

  async workerList(params: { includeExited: boolean; limit: number }): Promise<WorkerRow[]> {
    return rows<WorkerRow>(this.pool, params.includeExited ? WORKER_SQL.listAll : WORKER_SQL.listLive, [params.limit]);
  }

  async workerListLiveOnHost(params: { host: string }): Promise<WorkerRow[]> {
    return rows<WorkerRow>(this.pool, WORKER_SQL.liveOnHost, [params.host]);
  }

  /** Each class is counted at once on a connection of its own: counting 1e6 jobs is CPU work, and the server has more than one core. */
  async statsCounts(): Promise<ClassStatusCount[]> {
    const classes = await rows<{ class: string }>(this.pool, STATS_SQL.classesPresent);
    const counts = await Promise.all(
      classes.map((row) => readInIndex<StatusCount>(this.pool, STATS_SQL.countsOfClass, [row.class])),
    );
    return classes.flatMap((row, i) => counts[i]!.map((count) => ({ class: row.class, ...count })));
  }

  async statsOldestDue(params: { now: number }): Promise<ClassOldestDue[]> {
    return rows<ClassOldestDue>(this.pool, STATS_SQL.oldestDue, [params.now]);
  }

  async workerClassServed(params: { class: string }): Promise<boolean> {
    return (await first(this.pool, WORKER_SQL.classServed, [params.class])) !== undefined;
  }

  async workerServedClasses(params: { limit: number }): Promise<string[]> {
    return (await rows<{ class: string }>(this.pool, WORKER_SQL.servedClasses, [params.limit])).map((row) => row.class);
  }

  async statsInFlight(params: { limit: number }): Promise<InFlightJob[]> {
    return readInIndex<InFlightJob>(this.pool, STATS_SQL.inFlightOldest, [params.limit]);
  }

  async statsRetries(params: { since: number }): Promise<RetryBucket[]> {
    return this.inWindow(params.since, {}, (db, window) => rows<RetryBucket>(db, STATS_SQL.retryDistribution, window));
  }

  async statsTopErrors(params: { since: number; limit: number }): Promise<ErrorCount[]> {
    return readPlannedWithValues<ErrorCount>(this.pool, STATS_SQL.topErrors, [params.since, params.limit]);
  }

  async statsTopErrorsByClass(params: { since: number; limit: number }): Promise<ClassErrorCount[]> {
    return readPlannedWithValues<ClassErrorCount>(this.pool, STATS_SQL.topErrorsByClass, [params.since, params.limit]);
  }

  /** Three reads in one snapshot, so the rankings agree with the totals; a ranking longer than the rollup keeps reads the jobs. */
  async statsCost(params: { since: number; limit: number }): Promise<CostRanking> {
    const options = { useRollup: params.limit <= COST_TOP_KEPT };
    const [ranking] = await this.inWindow(params.since, options, (db, window) =>
      rows<CostRanking>(db, STATS_SQL.costRanking, [...window, params.limit]),
    );
    return ranking!;
  }

  async statsFinishedSince(params: { since: number }): Promise<StatusCount[]> {
    return this.inWindow(params.since, {}, (db, window) => rows<StatusCount>(db, STATS_SQL.finishedSince, window));
  }

  async statsFinishedByMinute(params: { since: number; until: number }): Promise<FinishedMinute[]> {
    return this.inWindow(params.since, { until: params.until }, (db, window) =>
      rows<FinishedMinute>(db, STATS_SQL.finishedByMinute, [...window, params.until]),
    );
  }

  /**
   * `read` of a stats window from `since` on (before `until`), split where the rollup covers it (its parts as the
   * statements' first five values), in one snapshot with the rollup's state: a roll-up committed in between adds to
   * the minute the window's rollup part ends in what the read also takes from the jobs.
   */
  private inWindow<T>(
    since: number,
    options: { until?: number; useRollup?: boolean },
    read: (db: pg.PoolClient, window: number[]) => Promise<T>,
  ): Promise<T> {
    return readInOneSnapshot(this.pool, async (db) =>
      read(db, partValues(windowParts(since, await rolledMinutes(db), options))),
    );
  }

  async classDisabledList(params: { liveSince: number }): Promise<DisabledClass[]> {
    return rows<DisabledClass>(this.pool, CLASS_SQL.disabledList, [params.liveSince]);
  }

  async workerCrashList(params: { since: number; liveSince: number; limit: number }): Promise<ChildCrash[]> {
    return rows<ChildCrash>(this.pool, WORKER_SQL.crashes, [params.since, params.liveSince, params.limit]);
  }

  async statsZombieWrites(): Promise<number> {
    return (await first<{ count: number }>(this.pool, STATS_SQL.zombieWrites))?.count ?? 0;
  }

  async classControlList(): Promise<ClassControl[]> {
    return rows<ClassControl>(this.pool, CLASS_SQL.list);
  }

  /** Three reads, not one snapshot: a start granted between them only moves the answer by that start. */
  async classRateWindow(params: { class: string; rateLimit: RateLimit }): Promise<RateWindow> {
    const now = this.clock.now();
    const since = windowStart(now, params.rateLimit);
    const started =
      (await first<{ count: number }>(this.pool, CLASS_SQL.startsSince, [params.class, since]))?.count ?? 0;
    const due = (await first<{ due: boolean }>(this.pool, CLASS_SQL.due, [params.class, now]))?.due ?? false;
    const place = blockingStart(params.rateLimit, started);
    const blocking =
      place === null
        ? undefined
        : await first<{ claimed_at: number }>(this.pool, CLASS_SQL.startAt, [params.class, since, place]);
    return {
      started,
      due,
      next_start_at: blocking === undefined ? null : windowLeftAt(blocking.claimed_at, params.rateLimit),
    };
  }

  async databaseSize(): Promise<DatabaseSize> {
    const row = await first<{ bytes: number; page_size: number }>(this.pool, STATS_SQL.databaseSize);
    const bytes = row?.bytes ?? 0;
    const pageSize = row?.page_size ?? 8192;
    return { bytes, pageCount: Math.ceil(bytes / pageSize), pageSize, freePages: 0 };
  }

  async scheduleList(): Promise<ScheduleRow[]> {
    return rows<ScheduleRow>(this.pool, SCHEDULE_SQL.list);
  }

  async schemaVersion(): Promise<number> {
    return (await first<{ version: number }>(this.pool, STATS_SQL.schemaVersion))?.version ?? 0;
  }

  /**
   * Wake-ups: `onJob` runs soon after a job of one of `classes` is enqueued
   * or retried by an operator (on commit). A hint: claim as usual, and keep a
   * slow poll, since notifications sent while the listening connection was
   * down are lost. A broken connection is reported to `onError` and opened
   * again with backoff; `onJob` runs when it breaks and once it listens again.
   * With `listen=off` in the URL nothing listens: workers only poll.
   */
  async subscribe(classes: string[], onJob: () => void, onError?: (error: Error) => void): Promise<WakeWatch> {
    return {
      rearm: () => undefined,
      stop: await this.listen(jobsChannel(classes), clientConfig(this.target), onJob, onError),
    };
  }

  /** On a connection of its own, named `<application_name> outcomes` in pg_stat_activity; it listens all along. */
  async outcomesSubscribe(onOutcome: () => void, onError: (error: Error) => void): Promise<WakeWatch> {
    const config = clientConfig(this.target);
    const named = { ...config, application_name: `${config.application_name} outcomes` };
    return { rearm: () => undefined, stop: await this.listen(OUTCOMES, named, onOutcome, onError) };
  }

  /** A listener that close() ends too; none with `listen=off`. */
  private async listen(
    channel: ListenChannel,
    config: pg.ClientConfig,
    onWake: () => void,
    onError?: (error: Error) => void,
  ): Promise<() => Promise<void>> {
    if (!this.target.listen) return async () => undefined;
    const stopListening = await listenOn(config, channel, onWake, onError);
    const stop = async () => {
      this.listening.delete(stop);
      await stopListening();
    };
    this.listening.add(stop);
    return stop;
  }

  /** The ids as one array literal: node-postgres quotes an array's elements one by one, 0.3 ms for 100 of them. */
  async jobsEnded(params: { ids: number[] }): Promise<JobRow[]> {
    return rows<JobRow>(this.pool, OUTCOME_SQL.ended, [`{${params.ids.join(',')}}`]);
  }

  async outcomeEventsAfter(params: { after: OutcomePosition; limit: number }): Promise<OutcomeEventRow[]> {
    return rows<OutcomeEventRow>(this.pool, OUTCOME_SQL.after, [params.after.txid, params.after.id, params.limit]);
  }

  async outcomeLatest(): Promise<OutcomePosition> {
    return (await first<OutcomePosition>(this.pool, OUTCOME_SQL.latest)) ?? OUTCOMES_START;
  }

  async ping(): Promise<void> {
    await first(this.pool, STATS_SQL.ping);
  }

  async integrityCheck(): Promise<string[]> {
    const orphans = (await rows<{ child: string; job_id: number }>(this.pool, INTEGRITY_SQL.orphans)).map(
      (row) => `${row.child} row of job ${row.job_id} has no jobs parent`,
    );
    const gaps = (
      await rows<{ id: number; attempts: number; rows: number; highest: number }>(this.pool, INTEGRITY_SQL.attemptGaps)
    ).map((row) => `job ${row.id}: attempts ${row.attempts} but ${row.rows} attempt rows up to ${row.highest}`);
    return [...orphans, ...gaps];
  }

  async jobsPruneCount(params: { status: TerminalStatus; finishedBefore: number }): Promise<number> {
    const [row] = await readPlannedWithValues<{ count: number }>(this.pool, RETENTION_SQL.countOlder, [
      params.status,
      params.finishedBefore,
    ]);
    return row?.count ?? 0;
  }

  /** The schema this store lives in. */
  get schema(): string {
    return this.target.schema;
  }

  /** How long past a lease's end the sweeper waits before taking it back. */
  get clockSkewMs(): number {
    return this.target.clockSkewMs;
  }
}
