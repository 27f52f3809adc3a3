import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { systemClock, type Clock } from './clock.js';
import { retentionSchema } from './config/schema.js';
import type { LeaseholdConfig } from './config/types.js';
import type { Logger } from './log.js';
import { NO_METRICS, type MetricsSink } from './metrics-sink.js';
import { TERMINAL_STATUSES, type Store, type TerminalStatus } from './store/types.js';

export type RetentionPolicy = LeaseholdConfig['retention'];

/** The config's defaults, for a `leasehold --db` run that has no config. */
export const DEFAULT_RETENTION: RetentionPolicy = Object.freeze(retentionSchema.parse({}));

const DAY_MS = 86_400_000;
/** Between two full batches, rest at most this long (see `rest`). */
const MAX_REST_MS = 50;

/** One terminal status's share of a prune. */
export interface PruneLine {
  status: TerminalStatus;
  older_than_days: number;
  /** Jobs that finished before this time (epoch ms) go. */
  finished_before: number;
  /** Deleted, or (dry run) that would be. */
  count: number;
}

export interface PruneReport {
  dry_run: boolean;
  now: number;
  total: number;
  by_status: PruneLine[];
  /** False when stop() cut the prune short (the next run picks up the rest). */
  complete: boolean;
  duration_ms: number;
}

export function retentionDays(policy: RetentionPolicy, status: TerminalStatus): number {
  return status === 'SUCCEEDED' ? policy.succeeded_days : status === 'FAILED' ? policy.failed_days : policy.cancelled_days;
}

/** What retention would delete at `now`, per terminal status: `stats` and `prune --dry-run`. */
export async function retentionPlan(store: Store, policy: RetentionPolicy, now: number): Promise<PruneLine[]> {
  const lines: PruneLine[] = [];
  for (const status of TERMINAL_STATUSES) {
    const days = retentionDays(policy, status);
    const finishedBefore = now - Math.round(days * DAY_MS);
    lines.push({ status, older_than_days: days, finished_before: finishedBefore, count: await store.jobsPruneCount({ status, finishedBefore }) });
  }
  return lines;
}

export interface RetentionOptions {
  store: Store;
  logger: Logger;
  policy: RetentionPolicy;
  clock?: Clock;
  metrics?: MetricsSink;
}

/**
 * Deletes terminal jobs older than the policy's days, per status, in batches
 * of `batch_size`: each batch is one short transaction, and between batches
 * the writer lock is let go long enough for workers to claim (see `rest`).
 * Attempts and events go with their job (ON DELETE CASCADE).
 */
export class Retention {
  private timer: NodeJS.Timeout | undefined;
  /** The scheduled run in flight, if any: the next tick skips while it runs. */
  private scheduled: Promise<unknown> | undefined;
  /** Every prune in flight, scheduled or called directly: stop() awaits them. */
  private readonly running = new Set<Promise<PruneReport>>();
  private stopped = false;
  private readonly clock: Clock;
  private readonly metrics: MetricsSink;

  constructor(private readonly options: RetentionOptions) {
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics ?? NO_METRICS;
  }

  /** Prune every `interval_seconds` until stop(). */
  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setInterval(() => {
      this.scheduled ??= this.prune()
        .catch((error: unknown) => void this.options.logger.error('retention failed', { err: error, event: 'RETENTION' }))
        .finally(() => (this.scheduled = undefined));
    }, this.options.policy.interval_seconds * 1000);
  }

  /** No more runs; a prune in flight stops after its current batch. Safe twice, or before start. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.running]);
  }

  /** One pass over every terminal status (or, dry run, only count what it would delete). */
  prune(options: { dryRun?: boolean } = {}): Promise<PruneReport> {
    const run = this.run(options.dryRun ?? false);
    this.running.add(run);
    void run.catch(() => undefined).finally(() => this.running.delete(run));
    return run;
  }

  private async run(dryRun: boolean): Promise<PruneReport> {
    const { store, policy, logger } = this.options;
    const started = Date.now();
    const now = this.clock.now();
    const lines = await retentionPlan(store, policy, now);
    if (dryRun) {
      return { dry_run: true, now, total: sum(lines), by_status: lines, complete: true, duration_ms: Date.now() - started };
    }
    let complete = true;
    for (const line of lines) line.count = 0;
    for (const line of lines) {
      for (;;) {
        if (this.stopped) {
          complete = false;
          break;
        }
        const batchStarted = Date.now();
        const deleted = await store.jobsPruneBatch({ status: line.status, finishedBefore: line.finished_before, limit: policy.batch_size });
        line.count += deleted;
        if (deleted > 0) this.metrics.jobsPruned(line.status, deleted);
        if (deleted < policy.batch_size) break;
        await rest(Date.now() - batchStarted);
      }
      if (!complete) break;
    }
    const report = { dry_run: false, now, total: sum(lines), by_status: lines, complete, duration_ms: Date.now() - started };
    const fields = {
      event: 'RETENTION',
      deleted: report.total,
      ...Object.fromEntries(lines.map((line) => [line.status.toLowerCase(), line.count])),
      duration_ms: report.duration_ms,
      complete,
    };
    if (report.total > 0) {
      logger.info(`retention deleted ${report.total} finished job(s) with their attempts and events`, fields);
    } else {
      logger.debug('retention: nothing to delete', fields);
    }
    return report;
  }
}

/**
 * Let go of the writer lock between two batches. A worker waiting on the lock
 * sleeps in SQLite's busy handler and retries every few to 100 ms, so handing
 * the loop one turn (setImmediate) is not enough for it to get in: rest about
 * as long as the batch took (capped), so the prune uses at most half the
 * writer's time while it has a backlog.
 */
async function rest(batchMs: number): Promise<void> {
  await nextTurn();
  await sleep(Math.min(MAX_REST_MS, Math.max(1, batchMs)));
}

function sum(lines: PruneLine[]): number {
  return lines.reduce((total, line) => total + line.count, 0);
}
