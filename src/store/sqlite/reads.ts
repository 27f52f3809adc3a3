import { prepareFlowStatements, type FlowStatements } from './sql/flows.js';
import type { Clock } from '../../clock.js';
import { blockingStart, windowLeftAt, windowStart } from '../rate-limit.js';
import type {
  AttemptCostRow,
  AttemptRow,
  ChildCrash,
  ClassControl,
  ClassCost,
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
import { failedStatement, FIRST_PAGE, jobListStatement } from '../job-filters.js';
import type { ScheduleRow } from '../schedules.js';
import { watchNextCommit } from './commit-watch.js';
import type { SqliteDb } from './connection.js';
import { prepareClassStatements, type ClassStatements } from './sql/classes.js';
import { prepareHistoryStatements, type HistoryStatements } from './sql/history.js';
import { prepareIntegrityStatements } from './sql/integrity.js';
import { prepareJobStatements, type JobStatements } from './sql/jobs.js';
import { prepareLeaseStatements, type LeaseStatements } from './sql/leases.js';
import { prepareRetentionStatements, type RetentionStatements } from './sql/retention.js';
import { prepareScheduleStatements, type ScheduleStatements } from './sql/schedules.js';
import { prepareStatsStatements, type StatsStatements } from './sql/stats.js';
import { prepareRollupStatements, type RollupStatements } from './sql/rollup.js';
import { rolledMinutes } from './stats-rollup.js';
import { COST_TOP_KEPT, windowParts, type WindowParts } from '../stats-window.js';
import { prepareWorkerStatements, type WorkerStatements } from './sql/workers.js';
import { prepareOutcomeStatements, type OutcomeStatements } from './sql/outcome-events.js';
import { OUTCOMES_START, type OutcomeEventRow, type OutcomePosition } from '../outcome-rows.js';
import type { WakeWatch } from '../wake-watch.js';

/**
 * The SQLite driver's half that changes nothing: every read of every role,
 * and the statements prepared once for both halves (the writes: writes.ts and store.ts).
 */
export abstract class SqliteReads {
  protected readonly jobs: JobStatements;
  protected readonly flows: FlowStatements;
  protected readonly leases: LeaseStatements;
  protected readonly history: HistoryStatements;
  protected readonly workers: WorkerStatements;
  protected readonly stats: StatsStatements;
  protected readonly retention: RetentionStatements;
  protected readonly schedules: ScheduleStatements;
  protected readonly classes: ClassStatements;
  protected readonly rollup: RollupStatements;
  protected readonly outcomes: OutcomeStatements;

  protected constructor(
    protected readonly db: SqliteDb,
    /** The store's time: what its statements take as now. */
    readonly clock: Clock,
  ) {
    this.jobs = prepareJobStatements(db);
    this.flows = prepareFlowStatements(db);
    this.leases = prepareLeaseStatements(db);
    this.history = prepareHistoryStatements(db);
    this.workers = prepareWorkerStatements(db);
    this.stats = prepareStatsStatements(db);
    this.retention = prepareRetentionStatements(db);
    this.schedules = prepareScheduleStatements(db);
    this.classes = prepareClassStatements(db);
    this.rollup = prepareRollupStatements(db);
    this.outcomes = prepareOutcomeStatements(db);
  }

  async jobGet(params: { id: number }): Promise<JobRow | undefined> {
    return this.jobs.get.get(params.id) as JobRow | undefined;
  }

  async jobParents(params: { id: number }): Promise<RelatedJob[]> {
    return this.flows.parentsOf.all(params.id) as RelatedJob[];
  }

  async jobChildren(params: { id: number; limit: number }): Promise<RelatedJob[]> {
    return this.flows.childrenOf.all(params.id, params.limit) as RelatedJob[];
  }

  async jobChildCount(params: { id: number }): Promise<number> {
    return (this.flows.countChildren.get(params.id) as { count: number }).count;
  }

  async jobList(params: JobListFilter): Promise<JobRow[]> {
    const statement = jobListStatement(params);
    if (statement === undefined) return [];
    const { status, errorCode, limit } = params;
    return this.jobs[statement].all({
      status,
      class: params.class,
      errorCode,
      limit,
      beforeId: params.beforeId ?? FIRST_PAGE,
    }) as JobRow[];
  }

  async jobListByKey(params: { key: string; class?: string }): Promise<JobRow[]> {
    const statement = params.class === undefined ? this.jobs.listByKey : this.jobs.listByClassKey;
    return statement.all(params) as JobRow[];
  }

  async jobCountFailed(params: FailedFilter): Promise<number> {
    const statement = this.jobs[failedStatement('count', params)];
    return (statement.get({ class: params.class, errorCode: params.errorCode }) as { count: number }).count;
  }

  async attemptList(params: { jobId: number }): Promise<AttemptRow[]> {
    return this.history.attemptList.all(params.jobId) as AttemptRow[];
  }

  async eventList(params: { jobId: number }): Promise<EventRow[]> {
    return this.history.eventList.all(params.jobId) as EventRow[];
  }

  async logList(params: { jobId: number }): Promise<JobLogRow[]> {
    return this.history.logList.all(params.jobId) as JobLogRow[];
  }

  async jobListHeldBy(params: { ownerId: string }): Promise<JobRow[]> {
    return this.leases.heldRowsByOwner.all(params) as JobRow[];
  }

  async workerList(params: { includeExited: boolean; limit: number }): Promise<WorkerRow[]> {
    const statement = params.includeExited ? this.workers.listAll : this.workers.listLive;
    return statement.all({ limit: params.limit }) as WorkerRow[];
  }

  async workerListLiveOnHost(params: { host: string }): Promise<WorkerRow[]> {
    return this.workers.liveOnHost.all(params) as WorkerRow[];
  }

  async statsCounts(): Promise<ClassStatusCount[]> {
    return this.stats.countsByClassStatus.all() as ClassStatusCount[];
  }

  async statsOldestDue(params: { now: number }): Promise<ClassOldestDue[]> {
    return this.stats.oldestDue.all(params) as ClassOldestDue[];
  }

  async workerClassServed(params: { class: string }): Promise<boolean> {
    return this.workers.classServed.get(params) !== undefined;
  }

  async workerServedClasses(params: { limit: number }): Promise<string[]> {
    return (this.workers.servedClasses.all(params) as { class: string }[]).map((row) => row.class);
  }

  async statsInFlight(params: { limit: number }): Promise<InFlightJob[]> {
    return this.stats.inFlightOldest.all(params) as InFlightJob[];
  }

  async statsRetries(params: { since: number }): Promise<RetryBucket[]> {
    return this.inWindow(params.since, {}, (window) => this.stats.retryDistribution.all(window) as RetryBucket[]);
  }

  async statsTopErrors(params: { since: number; limit: number }): Promise<ErrorCount[]> {
    return this.stats.topErrors.all(params) as ErrorCount[];
  }

  async statsTopErrorsByClass(params: { since: number; limit: number }): Promise<ClassErrorCount[]> {
    return this.stats.topErrorsByClass.all(params) as ClassErrorCount[];
  }

  /** Three reads in one snapshot, so the rankings agree with the totals; a ranking longer than the rollup keeps reads the jobs. */
  async statsCost(params: { since: number; limit: number }): Promise<CostRanking> {
    return this.inWindow(params.since, { useRollup: params.limit <= COST_TOP_KEPT }, (window) => {
      const ranking = { ...window, limit: params.limit };
      return {
        by_class: this.stats.costByClass.all(window) as ClassCost[],
        top_cpu: this.stats.costTopCpu.all(ranking) as AttemptCostRow[],
        top_rss: this.stats.costTopRss.all(ranking) as AttemptCostRow[],
      };
    });
  }

  async statsFinishedSince(params: { since: number }): Promise<StatusCount[]> {
    return this.inWindow(params.since, {}, (window) => this.stats.finishedSince.all(window) as StatusCount[]);
  }

  async statsFinishedByMinute(params: { since: number; until: number }): Promise<FinishedMinute[]> {
    return this.inWindow(
      params.since,
      { until: params.until },
      (window) => this.stats.finishedByMinute.all({ ...window, until: params.until }) as FinishedMinute[],
    );
  }

  /**
   * `read` of a stats window from `since` on, split where the rollup covers it (../stats-window.ts), in one
   * snapshot with the rollup's state: a roll-up committed in between adds to the minute the window's rollup part
   * ends in what the read also takes from the jobs.
   */
  private inWindow<T>(
    since: number,
    options: { until?: number; useRollup?: boolean },
    read: (window: WindowParts) => T,
  ): T {
    return this.db.transaction(() => read(windowParts(since, rolledMinutes(this.rollup), options))).deferred();
  }

  async classDisabledList(params: { liveSince: number }): Promise<DisabledClass[]> {
    return this.classes.disabledList.all(params) as DisabledClass[];
  }

  async workerCrashList(params: { since: number; liveSince: number; limit: number }): Promise<ChildCrash[]> {
    return this.workers.crashes.all(params) as ChildCrash[];
  }

  async statsZombieWrites(): Promise<number> {
    return (this.stats.zombieWrites.get() as { count: number }).count;
  }

  async classControlList(): Promise<ClassControl[]> {
    return this.classes.list.all() as ClassControl[];
  }

  /** Read in one transaction, so the count and the place it names agree. */
  async classRateWindow(params: { class: string; rateLimit: RateLimit }): Promise<RateWindow> {
    const now = this.clock.now();
    const read = this.db.transaction((): RateWindow => {
      const bind = { class: params.class, since: windowStart(now, params.rateLimit) };
      const started = (this.classes.startsSince.get(bind) as { count: number }).count;
      const due = (this.classes.due.get({ class: params.class, now }) as { due: number }).due === 1;
      const place = blockingStart(params.rateLimit, started);
      const blocking =
        place === null
          ? undefined
          : (this.classes.startAt.get({ ...bind, offset: place }) as { claimed_at: number } | undefined);
      return {
        started,
        due,
        next_start_at: blocking === undefined ? null : windowLeftAt(blocking.claimed_at, params.rateLimit),
      };
    });
    return read.deferred();
  }

  async databaseSize(): Promise<DatabaseSize> {
    const row = this.stats.databaseSize.get() as { page_count: number; page_size: number; freelist_count: number };
    return {
      bytes: row.page_count * row.page_size,
      pageCount: row.page_count,
      pageSize: row.page_size,
      freePages: row.freelist_count,
    };
  }

  async scheduleList(): Promise<ScheduleRow[]> {
    return this.schedules.list.all() as ScheduleRow[];
  }

  async schemaVersion(): Promise<number> {
    return (this.stats.schemaVersion.get() as { version: number }).version;
  }

  async subscribe(_classes: string[], onJob: () => void, onError?: (error: Error) => void): Promise<WakeWatch> {
    return watchNextCommit(this.db.name, onJob, onError);
  }

  async jobsEnded(params: { ids: number[] }): Promise<JobRow[]> {
    return this.outcomes.ended.all({ ids: JSON.stringify(params.ids) }) as JobRow[];
  }

  async outcomeEventsAfter(params: { after: OutcomePosition; limit: number }): Promise<OutcomeEventRow[]> {
    return this.outcomes.after.all({ afterId: params.after.id, limit: params.limit }) as OutcomeEventRow[];
  }

  async outcomeLatest(): Promise<OutcomePosition> {
    return { ...OUTCOMES_START, id: (this.outcomes.latest.get() as { id: number }).id };
  }

  /** Any commit wakes, once until rearmed: the watch cannot tell an outcome from a heartbeat. */
  async outcomesSubscribe(onOutcome: () => void, onError: (error: Error) => void): Promise<WakeWatch> {
    return watchNextCommit(this.db.name, onOutcome, onError);
  }

  async ping(): Promise<void> {
    this.stats.ping.get();
  }

  async integrityCheck(): Promise<string[]> {
    const checks = prepareIntegrityStatements(this.db);
    const pages = (checks.pages.all() as { problem: string }[])
      .map((row) => row.problem)
      .filter((problem) => problem !== 'ok');
    const keys = (checks.foreignKeys.all() as { child: string; rowid: number; parent: string }[]).map(
      (row) => `${row.child} row ${row.rowid} has no ${row.parent} parent`,
    );
    const gaps = (checks.attemptGaps.all() as { id: number; attempts: number; rows: number; highest: number }[]).map(
      (row) => `job ${row.id}: attempts ${row.attempts} but ${row.rows} attempt rows up to ${row.highest}`,
    );
    return [...pages, ...keys, ...gaps];
  }

  async jobsPruneCount(params: { status: TerminalStatus; finishedBefore: number }): Promise<number> {
    return (
      this.retention.countOlder.get({ status: params.status, before: params.finishedBefore }) as { count: number }
    ).count;
  }

  /** The raw connection, for the query-plan tests and the benchmark's bare-loop ceiling. */
  get connection(): SqliteDb {
    return this.db;
  }
}
