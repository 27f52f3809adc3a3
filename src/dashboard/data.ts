/**
 * What the dashboard's pages show, read from the store: one method per page
 * (or page part), so the web layer never builds queries and the bench can
 * time each page's data on its own.
 */
import type { JobStatus, JobRow, AttemptRow, EventRow, ErrorCount, OperatorStore, MaintenanceStore, ClassPause } from '../store/types.js';
import { collectStats, type InFlightView, type StatusCounts } from '../reports/stats.js';
import { describeWorkers, type WorkerView } from '../reports/workers.js';
import type { RetentionPolicy } from '../queue/retention.js';

export type DashboardStore = OperatorStore & MaintenanceStore;

/** Succeeded and failed jobs that finished within one minute. */
export interface ThroughputMinute {
  /** Start of the minute, ms since the epoch. */
  minute: number;
  SUCCEEDED: number;
  FAILED: number;
}

/** A class that is not consuming jobs as configured: disabled by a supervisor, or crashing again and again. */
export interface ClassTrouble {
  class: string;
  kind: 'disabled' | 'crash_loop';
  /** Which supervisor saw it (worker id), or null when read from the children's exits. */
  supervisor_id: string | null;
  reason: string;
  since: number;
}

export interface Overview {
  now: number;
  counts: { by_class: ({ class: string } & StatusCounts)[]; total: StatusCounts };
  /** The last hour, oldest minute first, one entry per minute (zeros included). */
  throughput: ThroughputMinute[];
  /** Held longest first. */
  in_flight: InFlightView[];
  /** Error codes of attempts that ended in the last hour, most frequent first. */
  top_errors: ErrorCount[];
  paused: ClassPause[];
  troubles: ClassTrouble[];
}

/** Filters of the jobs page; all optional, combined with AND. */
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
  attempts: AttemptRow[];
  events: EventRow[];
}

export interface DashboardData {
  overview(): Promise<Overview>;
  jobs(query: JobsQuery): Promise<JobsPage>;
  job(id: number): Promise<JobDetail | undefined>;
  /** The job enqueued with this idempotency key, if any. */
  jobByKey(key: string): Promise<JobRow | undefined>;
  workers(): Promise<WorkerView[]>;
  /** How many FAILED jobs a bulk retry with this filter would queue (what the confirmation shows). */
  failedCount(filter: { class?: string; errorCode?: string }): Promise<number>;
}

export interface DashboardDataOptions {
  now: () => number;
  retention: RetentionPolicy;
}

const HOUR_MS = 3_600_000;
const IN_FLIGHT_LIMIT = 10;
const TOP_ERRORS_LIMIT = 10;

/** The first, naive implementation: everything read afresh from the existing store reads. */
export function dashboardData(store: DashboardStore, options: DashboardDataOptions): DashboardData {
  return {
    async overview() {
      const now = options.now();
      const stats = await collectStats(store, { now, retention: options.retention, windowMs: HOUR_MS, limit: IN_FLIGHT_LIMIT });
      return {
        now,
        counts: stats.jobs,
        throughput: [],
        in_flight: stats.in_flight,
        top_errors: stats.errors.top.slice(0, TOP_ERRORS_LIMIT),
        paused: stats.paused,
        troubles: [],
      };
    },
    async jobs(query) {
      const jobs = await store.jobList({ class: query.class, status: query.status, limit: query.limit + 1 });
      const page = jobs.slice(0, query.limit);
      return { jobs: page, next_before_id: jobs.length > query.limit ? page[page.length - 1]!.id : null };
    },
    async job(id) {
      const job = await store.jobGet({ id });
      if (job === undefined) return undefined;
      return { job, attempts: await store.attemptList({ jobId: id }), events: await store.eventList({ jobId: id }) };
    },
    async jobByKey() {
      return undefined;
    },
    async workers() {
      return describeWorkers(await store.workerList({ includeExited: true, limit: 200 }), options.now());
    },
    async failedCount() {
      return 0;
    },
  };
}
