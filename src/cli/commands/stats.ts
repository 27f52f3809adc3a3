/** `leasehold stats`: the five operator questions, plus throughput. */
import {
  DEFAULT_STATS_LIMIT,
  MAX_STATS_LIMIT,
  statsReport,
  type RateLimitView,
  type StatsReport,
} from '../../reports/stats.js';
import type { CostReport } from '../../reports/cost.js';
import type { AttemptCostRow, ClassCost } from '../../store/types.js';
import { JOB_STATUSES } from '../../store/types.js';
import { defineCommand, output, resolveTarget, withStore, type GlobalArgs } from '../context.js';
import { numberOption } from '../numeric-options.js';
import { formatAgo, formatBytes, formatCpu, formatDuration, formatTime, formatWhen, table } from '../format.js';

interface StatsArgs extends GlobalArgs {
  hours: number;
  limit: number;
}

export const statsCommand = defineCommand<StatsArgs>({
  command: 'stats',
  describe:
    'counts by class and status, oldest in-flight jobs, retries, top errors, what jobs cost, what retention would delete',
  options: {
    hours: numberOption(
      'hours',
      { integer: false, min: 0, aboveMin: true },
      { default: 24, describe: 'window of the retry distribution and the error codes' },
    ),
    limit: numberOption(
      'limit',
      { integer: true, min: 1, max: MAX_STATS_LIMIT },
      { default: DEFAULT_STATS_LIMIT, describe: 'rows of in-flight jobs, of error codes and of the costliest jobs' },
    ),
  },
  run: async (args) => {
    const target = await resolveTarget(args);
    await withStore(target, args, { create: false }, async ({ store, clock }) => {
      const report = await statsReport(store, clock.now(), {
        config: target.config,
        windowMs: args.hours * 3_600_000,
        limit: args.limit,
      });
      output(args.json, report, () => statsText(report));
    });
  },
});

/** Paused classes and rate limits, when there are any: what holds a class's jobs back. */
function classControlsText(report: StatsReport): string[] {
  if (report.paused.length === 0 && report.rate_limits.length === 0) return [];
  const rows = [
    ...report.paused.map((row) => [
      row.class,
      `paused since ${formatWhen(row.paused_at, report.now)} by ${row.paused_by ?? '-'}: claims nothing until resumed`,
    ]),
    ...report.rate_limits.map((limit) => [limit.class, rateLimitText(limit)]),
  ];
  return ['', 'paused and rate-limited classes', table(['class', 'state'], rows)];
}

function rateLimitText(limit: RateLimitView): string {
  const rule = `${limit.max} per ${seconds(limit.per_seconds * 1000)}`;
  if (limit.waiting && limit.next_start_in_ms !== null)
    return `rate limited: ${rule}, next start in ${seconds(limit.next_start_in_ms)}`;
  return `rate limit ${rule}: ${limit.started} started in the window`;
}

/** Classes by CPU and by memory, and the jobs that used the most of each. */
function costText(cost: CostReport, now: number): string[] {
  const classes = (rows: ClassCost[]) =>
    table(
      ['class', 'attempts', 'cpu', 'mean cpu', 'peak rss'],
      rows.map((row) => [
        row.class,
        row.attempts,
        formatCpu(row.cpu_ms),
        formatCpu(row.mean_cpu_ms),
        formatBytes(row.max_peak_rss_bytes),
      ]),
    );
  const attempts = (rows: AttemptCostRow[]) =>
    table(
      ['id', 'attempt', 'class', 'status', 'cpu', 'peak rss', 'finished'],
      rows.map((row) => [
        row.job_id,
        row.attempt,
        row.class,
        row.status,
        formatCpu(row.cpu_ms),
        formatBytes(row.peak_rss_bytes),
        formatAgo(row.finished_at, now),
      ]),
    );
  const window = formatDuration(cost.window_ms);
  return [
    '',
    `what jobs cost in the last ${window} (their child's CPU and resident memory; shared by the jobs a child runs at once)`,
    'classes by CPU',
    classes(cost.by_cpu),
    'classes by peak memory',
    classes(cost.by_memory),
    'jobs that used the most CPU',
    attempts(cost.slowest),
    'jobs that used the most memory',
    attempts(cost.hungriest),
  ];
}

/** 0.4s, 1s, 12s: a rate limit's times read better in seconds than as 400ms. */
function seconds(ms: number): string {
  return `${ms < 10_000 ? Number((ms / 1000).toFixed(1)) : Math.round(ms / 1000)}s`;
}

function queuedOf(report: StatsReport, name: string): number {
  return report.jobs.by_class.find((row) => row.class === name)?.QUEUED ?? 0;
}

function statsText(report: StatsReport): string {
  const { now } = report;
  const window = formatDuration(report.window_ms);
  const minute = report.throughput.last_minute;
  const hour = report.throughput.last_hour;
  const done = (w: typeof minute) =>
    `${w.total} finished (${w.SUCCEEDED} succeeded, ${w.FAILED} failed, ${w.CANCELLED} cancelled), ${w.per_second}/s`;
  const paused = new Set(report.paused.map((row) => row.class));
  const waiting = new Set(report.rate_limits.filter((limit) => limit.waiting).map((limit) => limit.class));
  const marked = (name: string) =>
    paused.has(name) ? `${name} (paused)` : waiting.has(name) ? `${name} (rate limited)` : name;
  return [
    'jobs by class and status',
    table(
      ['class', ...JOB_STATUSES, 'total'],
      [
        ...report.jobs.by_class.map((row) => ({ ...row, class: marked(row.class) })),
        { class: 'all', ...report.jobs.total },
      ].map((row) => [row.class, ...JOB_STATUSES.map((s) => row[s]), row.total]),
    ),
    ...classControlsText(report),
    '',
    'queues: how long the oldest due job has waited',
    table(
      ['class', 'queued', 'oldest due waited', 'state'],
      report.queues.map((q) => [
        q.class,
        queuedOf(report, q.class),
        q.oldest_age_seconds === 0 ? '-' : seconds(q.oldest_age_seconds * 1000),
        q.unserved ? 'UNSERVED: no live worker on any host' : paused.has(q.class) ? 'paused' : '',
      ]),
    ),
    '',
    `throughput: last minute ${done(minute)}; last hour ${done(hour)}`,
    '',
    'oldest in-flight jobs',
    table(
      ['id', 'class', 'status', 'owner', 'pid', 'attempt', 'held', 'runtime', 'heartbeat', 'lease left'],
      report.in_flight.map((job) => [
        job.id,
        job.class,
        job.status + (job.cancel_requested ? ' (cancel requested)' : ''),
        job.owner_id,
        job.pid,
        job.attempt,
        job.held_ms === null ? null : formatDuration(job.held_ms),
        job.runtime_ms === null ? null : formatDuration(job.runtime_ms),
        formatAgo(job.heartbeat_at, now),
        job.lease_left_ms === null
          ? null
          : job.lease_left_ms >= 0
            ? formatDuration(job.lease_left_ms)
            : `expired ${formatDuration(-job.lease_left_ms)} ago`,
      ]),
    ),
    '',
    `retries: jobs finished in the last ${window} by attempts spent (${report.retries.retried} of ${report.retries.finished} needed more than one)`,
    table(
      ['class', 'status', 'attempts', 'jobs'],
      report.retries.buckets.map((b) => [b.class, b.status, b.attempts, b.jobs]),
    ),
    '',
    `top error codes of attempts in the last ${window}`,
    table(
      ['code', 'count', 'last'],
      report.errors.top.map((e) => [e.code, e.count, formatAgo(e.last_at, now)]),
    ),
    '',
    'top error codes per class',
    table(
      ['class', 'code', 'count', 'last'],
      report.errors.by_class.map((e) => [e.class, e.code, e.count, formatAgo(e.last_at, now)]),
    ),
    ...costText(report.cost, now),
    '',
    `retention would delete ${report.retention.total} job(s) now`,
    table(
      ['status', 'keep days', 'finished before', 'jobs'],
      report.retention.would_delete.map((line) => [
        line.status,
        String(line.older_than_days),
        formatTime(line.finished_before),
        line.count,
      ]),
    ),
    '',
    `database: ${formatBytes(report.database.bytes)} (${report.database.page_count} pages of ${report.database.page_size} bytes, ${report.database.free_pages} free)`,
  ].join('\n');
}
