/**
 * The operator's five questions, answered from the data (`leasehold stats`).
 * Pure composition of Store reads; the times are computed against one `now`.
 */
import type { ClassConfig, LeaseholdConfig } from '../config/schema.js';
import { InvalidInputError } from '../errors.js';
import { pausedClasses, rateLimitsByClass, rateLimitWaiting } from '../queue/class-controls.js';
import { retentionPlan, retentionPolicy, type PruneLine, type RetentionPolicy } from '../queue/retention.js';
import { collectCost, type CostReport } from './cost.js';
import { byName } from './format.js';
import { collectQueues, type QueueView } from './queue-age.js';
import { windowSince } from './windows.js';
import {
  JOB_STATUSES,
  type ClassErrorCount,
  type ClassPause,
  type ClassStatusCount,
  type ErrorCount,
  type InFlightJob,
  type JobStatus,
  type MaintenanceStore,
  type OperatorStore,
  type RateLimit,
  type RetryBucket,
} from '../store/types.js';

export const DEFAULT_STATS_WINDOW_MS = 24 * 3_600_000;
export const DEFAULT_STATS_LIMIT = 10;
export const MAX_STATS_LIMIT = 1_000;

export type StatusCounts = Record<JobStatus, number> & { total: number };

export interface ThroughputWindow {
  /** From the start of the minute a minute (an hour) ago to `now`: 60 to 120 s (1 h to 1 h 1 min). */
  window_ms: number;
  SUCCEEDED: number;
  FAILED: number;
  CANCELLED: number;
  total: number;
  per_second: number;
}

export interface InFlightView {
  id: number;
  class: string;
  status: 'CLAIMED' | 'RUNNING';
  owner_id: string | null;
  pid: number | null;
  attempt: number;
  claimed_at: number | null;
  started_at: number | null;
  heartbeat_at: number | null;
  lease_expires_at: number | null;
  cancel_requested: boolean;
  /** Since the claim. */
  held_ms: number | null;
  /** Since the handler started; null while only claimed. */
  runtime_ms: number | null;
  heartbeat_age_ms: number | null;
  /** Negative: the lease ran out and the sweeper has not taken it back yet. */
  lease_left_ms: number | null;
}

/** A rate-limited class of the config and its window now. */
export interface RateLimitView {
  class: string;
  max: number;
  per_seconds: number;
  /** Starts (claims) granted in the window a claim counts now: the last per_seconds plus the start margin. */
  started: number;
  /** Jobs are due and the window is full: the next start waits. */
  waiting: boolean;
  next_start_at: number | null;
  next_start_in_ms: number | null;
}

/** Jobs by class and status (each class by name), and their total. */
export interface JobCounts {
  by_class: ({ class: string } & StatusCounts)[];
  total: StatusCounts;
}

export interface StatsReport {
  now: number;
  /** The window of `retries` and `errors`: from their `since` (the start of the minute `windowMs` ago) to `now`. */
  window_ms: number;
  jobs: JobCounts;
  /** Each class's queue: how long its oldest due job has waited, and whether no live worker serves it. */
  queues: QueueView[];
  /** Classes that claim nothing until resumed. */
  paused: ClassPause[];
  rate_limits: RateLimitView[];
  throughput: { last_minute: ThroughputWindow; last_hour: ThroughputWindow };
  in_flight: InFlightView[];
  retries: { since: number; buckets: RetryBucket[]; finished: number; retried: number };
  errors: { since: number; top: ErrorCount[]; by_class: ClassErrorCount[] };
  /** What jobs cost in the last hour: classes and attempts by CPU and by peak memory (`limit` attempts each). */
  cost: CostReport;
  retention: {
    policy: { succeeded_days: number; failed_days: number; cancelled_days: number };
    would_delete: PruneLine[];
    total: number;
  };
  database: { bytes: number; page_count: number; page_size: number; free_pages: number };
}

export interface StatsOptions {
  now: number;
  retention: RetentionPolicy;
  windowMs?: number;
  /** Rows of in_flight, and error codes per list. */
  limit?: number;
  /** The config's classes: their rate limits are reported. */
  classes?: readonly ClassConfig[];
}

/** What `leasehold stats` and `Queue.stats()` ask for. */
export interface StatsRequest {
  /** The config: its retention policy (default: the defaults), and its classes' queues and rate limits. */
  config?: Pick<LeaseholdConfig, 'classes' | 'retention'>;
  /** The window of `retries` and `errors`, above 0 (default 24 hours). */
  windowMs?: number;
  /** Rows of in_flight, of error codes and of the costliest jobs: 1 to MAX_STATS_LIMIT (default 10). */
  limit?: number;
}

/** The stats report of `stats --json`, the dashboard's figures aside: checks the request, then collects. */
export async function statsReport(
  store: OperatorStore & MaintenanceStore,
  now: number,
  request: StatsRequest = {},
): Promise<StatsReport> {
  const { config, windowMs, limit } = request;
  if (windowMs !== undefined && !(Number.isFinite(windowMs) && windowMs > 0))
    throw new InvalidInputError('WINDOW', `windowMs must be a number > 0, got ${String(windowMs)}`);
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 1 && limit <= MAX_STATS_LIMIT))
    throw new InvalidInputError('LIMIT', `limit must be an integer from 1 to ${MAX_STATS_LIMIT}, got ${String(limit)}`);
  return collectStats(store, { now, retention: retentionPolicy(config), windowMs, limit, classes: config?.classes });
}

/**
 * The reads are independent, so they are all started at once: on PostgreSQL each takes a
 * connection of the pool and the server runs them side by side (the counts alone take one per
 * class); SQLite's calls answer one after another on its one connection, so starting them together costs nothing.
 */
export async function collectStats(
  store: OperatorStore & MaintenanceStore,
  options: StatsOptions,
): Promise<StatsReport> {
  const { now } = options;
  const windowMs = options.windowMs ?? DEFAULT_STATS_WINDOW_MS;
  const limit = options.limit ?? DEFAULT_STATS_LIMIT;
  const since = windowSince(now, windowMs);
  const [
    counts,
    queues,
    paused,
    rateLimits,
    lastMinute,
    lastHour,
    inFlight,
    buckets,
    topErrors,
    errorsByClass,
    cost,
    wouldDelete,
    size,
  ] = await Promise.all([
    store.statsCounts(),
    collectQueues(
      store,
      now,
      (options.classes ?? []).map((c) => c.name),
    ),
    pausedClasses(store),
    Promise.all(
      [...rateLimitsByClass(options.classes ?? [])].map(([jobClass, rateLimit]) =>
        rateLimitView(store, jobClass, rateLimit, now),
      ),
    ),
    throughput(store, now, 60_000),
    throughput(store, now, 3_600_000),
    store.statsInFlight({ limit }),
    store.statsRetries({ since }),
    store.statsTopErrors({ since, limit }),
    store.statsTopErrorsByClass({ since, limit }),
    collectCost(store, now, limit),
    retentionPlan(store, options.retention, now),
    store.databaseSize(),
  ]);
  return {
    now,
    window_ms: now - since,
    jobs: jobCounts(counts),
    queues,
    paused,
    rate_limits: rateLimits,
    throughput: { last_minute: lastMinute, last_hour: lastHour },
    in_flight: inFlight.map((job) => inFlightView(job, now)),
    retries: {
      since,
      buckets,
      finished: buckets.reduce((n, b) => n + b.jobs, 0),
      retried: buckets.reduce((n, b) => n + (b.attempts > 1 ? b.jobs : 0), 0),
    },
    errors: { since, top: topErrors, by_class: errorsByClass },
    cost,
    retention: {
      policy: {
        succeeded_days: options.retention.succeeded_days,
        failed_days: options.retention.failed_days,
        cancelled_days: options.retention.cancelled_days,
      },
      would_delete: wouldDelete,
      total: wouldDelete.reduce((n, line) => n + line.count, 0),
    },
    database: { bytes: size.bytes, page_count: size.pageCount, page_size: size.pageSize, free_pages: size.freePages },
  };
}

/** A rate-limited class's window at `now`. */
async function rateLimitView(
  store: OperatorStore,
  jobClass: string,
  rateLimit: RateLimit,
  now: number,
): Promise<RateLimitView> {
  const window = await store.classRateWindow({ class: jobClass, rateLimit });
  const waiting = rateLimitWaiting(window);
  const nextStartAt = waiting ? window.next_start_at : null;
  return {
    class: jobClass,
    max: rateLimit.max,
    per_seconds: rateLimit.perMs / 1000,
    started: window.started,
    waiting,
    next_start_at: nextStartAt,
    next_start_in_ms: nextStartAt === null ? null : Math.max(0, nextStartAt - now),
  };
}

/** statsCounts' rows summed by class and overall. */
export function jobCounts(rows: readonly ClassStatusCount[]): JobCounts {
  const total = emptyCounts();
  const byClass = new Map<string, StatusCounts>();
  for (const row of rows) {
    const counts = byClass.get(row.class) ?? emptyCounts();
    byClass.set(row.class, counts);
    counts[row.status] += row.count;
    counts.total += row.count;
    total[row.status] += row.count;
    total.total += row.count;
  }
  return {
    by_class: [...byClass.entries()]
      .sort(([a], [b]) => byName(a, b))
      .map(([name, counts]) => ({ class: name, ...counts })),
    total,
  };
}

/** A held job and its ages at `now`. */
export function inFlightView(job: InFlightJob, now: number): InFlightView {
  return {
    id: job.id,
    class: job.class,
    status: job.status,
    owner_id: job.owner_id,
    pid: job.pid,
    attempt: job.attempts,
    claimed_at: job.claimed_at,
    started_at: job.started_at,
    heartbeat_at: job.heartbeat_at,
    lease_expires_at: job.lease_expires_at,
    cancel_requested: job.cancel_requested_at !== null,
    held_ms: since0(now, job.claimed_at),
    runtime_ms: since0(now, job.started_at),
    heartbeat_age_ms: since0(now, job.heartbeat_at),
    lease_left_ms: job.lease_expires_at === null ? null : job.lease_expires_at - now,
  };
}

/** Jobs that finished since the start of the minute `windowMs` before `now`; `window_ms` is that span. */
async function throughput(store: OperatorStore, now: number, windowMs: number): Promise<ThroughputWindow> {
  const since = windowSince(now, windowMs);
  const window: ThroughputWindow = {
    window_ms: now - since,
    SUCCEEDED: 0,
    FAILED: 0,
    CANCELLED: 0,
    total: 0,
    per_second: 0,
  };
  for (const row of await store.statsFinishedSince({ since })) {
    if (row.status === 'SUCCEEDED' || row.status === 'FAILED' || row.status === 'CANCELLED')
      window[row.status] += row.count;
    window.total += row.count;
  }
  window.per_second = Number((window.total / (window.window_ms / 1000)).toPrecision(3));
  return window;
}

function emptyCounts(): StatusCounts {
  return { ...(Object.fromEntries(JOB_STATUSES.map((status) => [status, 0])) as Record<JobStatus, number>), total: 0 };
}

function since0(now: number, at: number | null): number | null {
  return at === null ? null : now - at;
}
