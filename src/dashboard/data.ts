/**
 * What the dashboard's pages show, read from the store: one method per page
 * (or page part), so the web layer never builds queries and the bench can
 * time each page's data on its own. Every read walks an index (the store's
 * query-plan tests); the counts are kept for a second and the throughput
 * chart's ended minutes for good, so a page polled every 2 s stays cheap.
 */
import type { ClassConfig } from '../config/schema.js';
import { pausedClasses } from '../queue/class-controls.js';
import { schedulesReport, type ScheduleView } from '../queue/schedules.js';
import { collectCost, type CostReport } from '../reports/cost.js';
import { jobFlow, type JobFlow } from '../reports/job-flow.js';
import { collectQueues, type QueueView } from '../reports/queue-age.js';
import { inFlightView, jobCounts, type InFlightView, type JobCounts } from '../reports/stats.js';
import { describeWorkers, type WorkerView } from '../reports/workers.js';
import type { SchedulerStore } from '../store/schedules.js';
import type {
  AttemptRow,
  ClassPause,
  ErrorCount,
  EventRow,
  FailedFilter,
  JobLogRow,
  JobRow,
  JobStatus,
  OperatorStore,
  WorkerRow,
} from '../store/types.js';
import { Recent } from './recent.js';
import { ThroughputChart, type ThroughputMinute } from './throughput.js';
import { classTroubles, type ClassTrouble } from './troubles.js';

export type { ThroughputMinute } from './throughput.js';
export type { ClassTrouble } from './troubles.js';

export type DashboardStore = OperatorStore & Pick<SchedulerStore, 'scheduleList'>;

/** An error code of the last hour, and whether any FAILED job ended with it (a bulk retry of the code would queue some). */
export interface TopError extends ErrorCount {
  has_failed_jobs: boolean;
}

export interface Overview {
  now: number;
  counts: JobCounts;
  /** When `counts` were counted: at most COUNTS_MAX_AGE_MS before `now`. */
  counts_at: number;
  /** The last hour, oldest minute first, one entry per minute (zeros included). */
  throughput: ThroughputMinute[];
  /** Held longest first. */
  in_flight: InFlightView[];
  /** Error codes of attempts that ended in the last hour, most frequent first. */
  top_errors: TopError[];
  paused: ClassPause[];
  troubles: ClassTrouble[];
  /** Each class's oldest due job's age, and whether no live worker serves it. */
  queues: QueueView[];
  /** What the last hour's attempts cost: classes by CPU and by memory, the slowest and hungriest attempts. */
  cost: CostReport;
}

/**
 * Filters of the jobs page; all optional, combined with AND. `errorCode`
 * matches FAILED jobs (the dead letter: what a bulk retry queues) by the code
 * they ended with; with another `status` it matches nothing.
 */
export interface JobsQuery {
  class?: string;
  status?: JobStatus;
  errorCode?: string;
  /** Keyset cursor: only jobs with a smaller id (the page after the one that ended at this id). */
  beforeId?: number;
  limit: number;
}

export interface JobsPage {
  jobs: JobRow[];
  /** The cursor of the next page (its `beforeId`), or null on the last page. */
  next_before_id: number | null;
}

export interface JobDetail {
  job: JobRow;
  /** Its parents and (the first of) its children in a flow. */
  flow: JobFlow;
  attempts: AttemptRow[];
  events: EventRow[];
  logs: JobLogRow[];
}

/** What a bulk action's confirmation counted: the newest matching job's id (null: none match), and how many match. */
export interface BulkScope {
  through_id: number | null;
  count: number;
}

export interface DashboardData {
  overview(): Promise<Overview>;
  jobs(query: JobsQuery): Promise<JobsPage>;
  job(id: number): Promise<JobDetail | undefined>;
  /**
   * The job enqueued with this idempotency key, if any. A key is unique
   * within a class: with no class given, the newest of the classes' jobs
   * holding it.
   */
  jobByKey(key: string, jobClass?: string): Promise<JobRow | undefined>;
  /** Supervisors and children, newest first: every one not known to have exited, and the newest WORKERS_SHOWN; stale ones flagged. */
  workers(): Promise<WorkerView[]>;
  /** How many FAILED jobs a bulk retry with this filter would queue (what the confirmation shows). */
  failedCount(filter: FailedFilter): Promise<number>;
  /** The bulk retry's scope: FAILED jobs of the filter. */
  failedScope(filter: FailedFilter): Promise<BulkScope>;
  /** The bulk cancel's scope: QUEUED jobs of a class, or of every class. */
  queuedScope(jobClass: string | undefined): Promise<BulkScope>;
  /** The config's schedules, their next run and their last (none without a config). */
  schedules(): Promise<ScheduleView[]>;
}

export interface DashboardDataOptions {
  now: () => number;
  /** The config's classes, when the dashboard has one: their restart windows (the crash-loop rule). */
  classes?: readonly ClassConfig[];
}

/** The issue allows counts this old; counting 1e6 jobs takes tens of milliseconds. */
export const COUNTS_MAX_AGE_MS = 1_000;
const HOUR_MS = 3_600_000;
const IN_FLIGHT_LIMIT = 10;
const TOP_ERRORS_LIMIT = 10;
const COST_LIMIT = 5;
export const WORKERS_SHOWN = 200;
/** Workers not known to have exited, read at most: a few per class per host. */
const LIVE_WORKERS_READ = 5_000;

export function dashboardData(store: DashboardStore, options: DashboardDataOptions): DashboardData {
  // The newest id first, then the count: a job that arrives between the two is counted but not taken, so the action
  // touches no more than the confirmation said.
  const scope = async (newest: JobRow[], count: () => Promise<number>): Promise<BulkScope> => ({
    through_id: newest[0]?.id ?? null,
    count: await count(),
  });
  const counts = new Recent(COUNTS_MAX_AGE_MS, options.now, async () => jobCounts(await store.statsCounts()));
  const throughput = new ThroughputChart(store);
  // Attempts of jobs retried since, or cancelled while they ran, leave codes no FAILED job ended with: nothing to retry.
  // One FAILED job is enough to know (a seek per code), where counting them would walk every one, each poll.
  const withFailedJobs = async (error: ErrorCount): Promise<TopError> => {
    const [failed] = await store.jobList({ status: 'FAILED', errorCode: error.code, limit: 1 });
    return { ...error, has_failed_jobs: failed !== undefined };
  };
  return {
    // The parts at once: on PostgreSQL each is a round trip on a connection of its own.
    async overview() {
      const now = options.now();
      const [counted, chart, inFlight, topErrors, paused, troubles, cost, queues] = await Promise.all([
        counts.get(),
        throughput.minutes(now),
        store.statsInFlight({ limit: IN_FLIGHT_LIMIT }),
        store
          .statsTopErrors({ since: now - HOUR_MS, limit: TOP_ERRORS_LIMIT })
          .then((errors) => Promise.all(errors.map(withFailedJobs))),
        pausedClasses(store),
        classTroubles(store, now, options.classes),
        collectCost(store, now, COST_LIMIT),
        collectQueues(store, now, []),
      ]);
      const in_flight = inFlight.map((job) => inFlightView(job, now));
      return {
        now,
        counts: counted.value,
        counts_at: counted.at,
        throughput: chart,
        in_flight,
        top_errors: topErrors,
        paused,
        troubles,
        cost,
        queues,
      };
    },
    async jobs(query) {
      const jobs = await store.jobList({ ...query, limit: query.limit + 1 });
      const page = jobs.slice(0, query.limit);
      return { jobs: page, next_before_id: jobs.length > query.limit ? page[page.length - 1]!.id : null };
    },
    async job(id) {
      const job = await store.jobGet({ id });
      if (job === undefined) return undefined;
      const [flow, attempts, events, logs] = [
        await jobFlow(store, id),
        await store.attemptList({ jobId: id }),
        await store.eventList({ jobId: id }),
        await store.logList({ jobId: id }),
      ];
      return { job, flow, attempts, events, logs };
    },
    async jobByKey(key, jobClass) {
      return (await store.jobListByKey({ key, class: jobClass }))[0];
    },
    // The live rows apart: after a long crash loop, a supervisor that started long ago is not among the newest rows,
    // and without its row its children could not be flagged stale.
    async workers() {
      const [live, newest] = await Promise.all([
        store.workerList({ includeExited: false, limit: LIVE_WORKERS_READ }),
        store.workerList({ includeExited: true, limit: WORKERS_SHOWN }),
      ]);
      const rows = new Map<string, WorkerRow>([...newest, ...live].map((row) => [row.id, row]));
      return describeWorkers(
        [...rows.values()].sort((a, b) => b.started_at - a.started_at),
        options.now(),
      );
    },
    async failedCount(filter) {
      return store.jobCountFailed(filter);
    },
    async failedScope(filter) {
      return scope(await store.jobList({ ...filter, status: 'FAILED', limit: 1 }), () => store.jobCountFailed(filter));
    },
    async queuedScope(jobClass) {
      const queued = async () => {
        const { total, by_class } = jobCounts(await store.statsCounts());
        return jobClass === undefined ? total.QUEUED : (by_class.find((row) => row.class === jobClass)?.QUEUED ?? 0);
      };
      return scope(await store.jobList({ class: jobClass, status: 'QUEUED', limit: 1 }), queued);
    },
    async schedules() {
      return (await schedulesReport(store, { classes: options.classes ?? [] }, options.now())).schedules;
    },
  };
}
