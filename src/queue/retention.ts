/**
 * Retention, one pass: delete terminal jobs older than the policy's days, per
 * status, in batches of `batch_size`. Each batch is one short transaction;
 * between batches the writer lock is let go long enough for workers to claim
 * (see `rest`). Attempts and events go with their job (ON DELETE CASCADE).
 * `leasehold prune` runs one pass; the supervisor runs one every
 * `interval_seconds` (supervisor/retention.ts).
 */
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { LeaseholdConfig } from '../config/schema.js';
import { TERMINAL_STATUSES, type MaintenanceStore, type TerminalStatus } from '../store/types.js';
import { DEFAULT_RETENTION } from '../limits.js';

export type RetentionPolicy = LeaseholdConfig['retention'];

/** The config's policy; without a config, the defaults. */
export function retentionPolicy(config: Pick<LeaseholdConfig, 'retention'> | undefined): RetentionPolicy {
  return config?.retention ?? DEFAULT_RETENTION;
}

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
  /** False when the pass was stopped early (the next run picks up the rest). */
  complete: boolean;
  duration_ms: number;
}

export interface PruneOptions {
  now: number;
  dryRun?: boolean;
  /** Asked before each batch: true ends the pass there. */
  stopped?: () => boolean;
  /** Told of each batch deleted. */
  onDeleted?: (status: TerminalStatus, count: number) => void;
}

function retentionDays(policy: RetentionPolicy, status: TerminalStatus): number {
  return status === 'SUCCEEDED'
    ? policy.succeeded_days
    : status === 'FAILED'
      ? policy.failed_days
      : policy.cancelled_days;
}

/** What retention would delete at `now`, per terminal status: `stats` and `prune --dry-run`. */
export async function retentionPlan(
  store: MaintenanceStore,
  policy: RetentionPolicy,
  now: number,
): Promise<PruneLine[]> {
  const lines: PruneLine[] = [];
  for (const status of TERMINAL_STATUSES) {
    const days = retentionDays(policy, status);
    const finishedBefore = now - Math.round(days * DAY_MS);
    lines.push({
      status,
      older_than_days: days,
      finished_before: finishedBefore,
      count: await store.jobsPruneCount({ status, finishedBefore }),
    });
  }
  return lines;
}

/** One pass over every terminal status (or, dry run, only count what it would delete). */
export async function pruneFinishedJobs(
  store: MaintenanceStore,
  policy: RetentionPolicy,
  options: PruneOptions,
): Promise<PruneReport> {
  const started = Date.now();
  const { now } = options;
  const lines = await retentionPlan(store, policy, now);
  const report = (complete: boolean): PruneReport => ({
    dry_run: options.dryRun ?? false,
    now,
    total: lines.reduce((total, line) => total + line.count, 0),
    by_status: lines,
    complete,
    duration_ms: Date.now() - started,
  });
  if (options.dryRun === true) return report(true);
  for (const line of lines) line.count = 0;
  for (const line of lines) {
    for (;;) {
      if (options.stopped?.() === true) return report(false);
      const batchStarted = Date.now();
      const deleted = await store.jobsPruneBatch({
        status: line.status,
        finishedBefore: line.finished_before,
        limit: policy.batch_size,
      });
      line.count += deleted;
      if (deleted > 0) options.onDeleted?.(line.status, deleted);
      if (deleted < policy.batch_size) break;
      await rest(Date.now() - batchStarted);
    }
  }
  return report(true);
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
