/**
 * How long each class's queue has waited, and whether anything serves it: the
 * oldest due job's age, and the classes with due jobs but no live worker on
 * any host (`stats`, /metrics, the dashboard, the supervisor's CLASS_UNSERVED).
 */
import { pausedClasses } from '../queue/class-controls.js';
import { STALE_SUPERVISOR_MS } from '../queue/registry.js';
import { byName } from './format.js';
import type { ClassControl, ClassOldestDue, WorkerRow } from '../store/types.js';

/** A class's queue at `now`. */
export interface QueueView {
  class: string;
  /** Seconds the oldest due job (QUEUED, run_at passed) has waited; 0 when none is due. */
  oldest_age_seconds: number;
  /** Jobs are due, the class is not paused, and no live child of it runs on any host. */
  unserved: boolean;
}

/** What the queue views are read from. */
export interface QueueStore {
  statsOldestDue(params: { now: number }): Promise<ClassOldestDue[]>;
  workerList(params: { includeExited: boolean; limit: number }): Promise<WorkerRow[]>;
  classControlList(): Promise<ClassControl[]>;
}

/** Rows of the live registry read at most: far above any deployment's children. */
const LIVE_WORKERS_READ = 10_000;

/** Seconds from run_at to now, to a tenth: never negative. */
export function ageSeconds(now: number, runAt: number): number {
  return Math.max(0, Math.round((now - runAt) / 100) / 10);
}

/**
 * Classes with a live child: one not known to have exited whose supervisor is
 * live by the registry's rule (not exited, refreshed within STALE_SUPERVISOR_MS),
 * the rule `leasehold workers` marks STALE by.
 */
export function servedClasses(live: readonly WorkerRow[], now: number): Set<string> {
  const liveSupervisors = new Set(
    live
      .filter(
        (row) => row.kind === 'supervisor' && row.exited_at === null && now - row.heartbeat_at <= STALE_SUPERVISOR_MS,
      )
      .map((row) => row.id),
  );
  return new Set(
    live.flatMap((row) =>
      row.kind === 'child' &&
      row.exited_at === null &&
      row.class !== null &&
      row.supervisor_id !== null &&
      liveSupervisors.has(row.supervisor_id)
        ? [row.class]
        : [],
    ),
  );
}

/** Each class in `classes` or with jobs due, by name: its oldest due job's age and whether it is unserved. */
export async function collectQueues(store: QueueStore, now: number, classes: Iterable<string>): Promise<QueueView[]> {
  const [due, covered] = await Promise.all([store.statsOldestDue({ now }), servedOrPaused(store, now)]);
  const oldest = new Map(due.map((row) => [row.class, row.run_at]));
  const names = [...new Set([...classes, ...oldest.keys()])].sort(byName);
  return names.map((name) => {
    const runAt = oldest.get(name);
    return {
      class: name,
      oldest_age_seconds: runAt === undefined ? 0 : ageSeconds(now, runAt),
      unserved: runAt !== undefined && !covered.has(name),
    };
  });
}

/** The classes that are not unserved, whatever is due: those with a live child on some host, and the paused ones. */
export async function servedOrPaused(store: QueueStore, now: number): Promise<Set<string>> {
  const [live, paused] = await Promise.all([
    store.workerList({ includeExited: false, limit: LIVE_WORKERS_READ }),
    pausedClasses(store),
  ]);
  return new Set([...servedClasses(live, now), ...paused.map((row) => row.class)]);
}
