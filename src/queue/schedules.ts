/**
 * Cron schedules: which occurrences are due, and one pass that enqueues them
 * through the store's compare-and-set cursor (exactly once across hosts).
 * The supervisor runs passes (supervisor/scheduler.ts); `leasehold
 * schedules` shows the next and last runs.
 */
import type { Cron } from 'croner';
import type { Clock } from '../clock.js';
import type { CatchUpMode, ClassConfig, LeaseholdConfig, ScheduleConfig } from '../config/schema.js';
import type { ScheduleRow, SchedulerStore } from '../store/schedules.js';
import type { InsertedJob, ProducerStore } from '../store/types.js';
import { cronOf } from './cron.js';
import { prepareJob } from './enqueue.js';
import { sendTraced } from '../tracing/gate.js';

/**
 * An occurrence this recent is on time, whatever catch_up says: a host late
 * by seconds (a slow tick, a short database fault) still enqueues it. Older
 * ones, past the schedule's cursor, were missed while no supervisor ran.
 */
export const ON_TIME_MS = 10_000;
/** catch_up: all enqueues at most this many missed occurrences (the latest ones). */
export const CATCH_UP_CAP = 1_000;

/** A schedule of the config and its croner (its jobs take their class's max_retries when claimed, as any job that sets none). */
export interface Schedule {
  class: string;
  config: ScheduleConfig;
  cron: Cron;
}

export function schedulesOf(classes: readonly ClassConfig[]): Schedule[] {
  return classes.flatMap((cls) =>
    cls.schedules.map((config) => ({ class: cls.name, config, cron: cronOf(config.cron, config.timezone) })),
  );
}

/** The idempotency key of one occurrence (unique per class, like every key). */
export function occurrenceKey(name: string, at: number): string {
  return `schedule:${name}@${new Date(at).toISOString()}`;
}

export interface OccurrencePlan {
  /** Occurrences to enqueue, oldest first. */
  enqueue: number[];
  /** Missed occurrences left out (catch_up latest or none, or past the cap), first and last. */
  skipped: { first: number; last: number } | undefined;
  /** The schedule's new cursor (the latest occurrence handled); undefined when nothing is due. */
  through: number | undefined;
}

/** Which occurrences after `checkedThrough` and at or before `now` to enqueue, as `mode` says for the missed ones. */
export function planOccurrences(cron: Cron, mode: CatchUpMode, checkedThrough: number, now: number): OccurrencePlan {
  const onTimeFrom = Math.max(checkedThrough, now - ON_TIME_MS);
  const onTime: number[] = [];
  for (let at = nextAfter(cron, onTimeFrom); at !== undefined && at <= now; at = nextAfter(cron, at)) onTime.push(at);
  const latestMissed = latestAtOrBefore(cron, onTimeFrom, 1).find((at) => at > checkedThrough);
  const through = onTime.at(-1) ?? latestMissed;
  if (latestMissed === undefined) return { enqueue: onTime, skipped: undefined, through };

  const firstMissed = nextAfter(cron, checkedThrough) as number;
  const skippedBefore = (kept: number) =>
    firstMissed < kept ? { first: firstMissed, last: latestAtOrBefore(cron, kept - 1, 1)[0] as number } : undefined;
  switch (mode) {
    case 'none':
      return { enqueue: onTime, skipped: { first: firstMissed, last: latestMissed }, through };
    case 'latest':
      return { enqueue: [latestMissed, ...onTime], skipped: skippedBefore(latestMissed), through };
    case 'all': {
      const missed = latestAtOrBefore(cron, onTimeFrom, CATCH_UP_CAP)
        .filter((at) => at > checkedThrough)
        .reverse();
      return { enqueue: [...missed, ...onTime], skipped: skippedBefore(missed[0] as number), through };
    }
  }
}

/** The first occurrence after `at` (croner: strictly after, to the second). */
function nextAfter(cron: Cron, at: number): number | undefined {
  return cron.nextRun(new Date(at))?.getTime();
}

/** Up to `count` occurrences at or before `at`, latest first. */
function latestAtOrBefore(cron: Cron, at: number, count: number): number[] {
  return cron.previousRuns(count, new Date(at + 1)).map((date) => date.getTime());
}

/** The next occurrence of any schedule after `now`, or undefined when none will come. */
export function nextOccurrence(schedules: readonly Schedule[], now: number): number | undefined {
  const next = schedules.map((schedule) => nextAfter(schedule.cron, now)).filter((at) => at !== undefined);
  return next.length === 0 ? undefined : Math.min(...next);
}

/** What one pass did for one schedule. */
export type ScheduleOutcome =
  | { type: 'started'; schedule: Schedule; through: number }
  | {
      type: 'advanced';
      schedule: Schedule;
      enqueued: { at: number; job: InsertedJob }[];
      skipped: OccurrencePlan['skipped'];
    }
  /** Another process moved the schedule first: it enqueued those occurrences. */
  | { type: 'lost'; schedule: Schedule };

export interface SchedulePassOptions {
  clock: Clock;
  /** Recorded as the schedules' `updated_by` and as the actor of the ENQUEUED events. */
  actor: string;
  payloadLimitBytes: number;
}

/**
 * One pass: read every schedule's cursor, and move each that has something
 * due (a schedule seen for the first time starts at now: nothing older is
 * enqueued). Schedules with nothing due write nothing.
 */
export async function runSchedules(
  store: SchedulerStore,
  schedules: readonly Schedule[],
  options: SchedulePassOptions,
): Promise<ScheduleOutcome[]> {
  const rows = new Map((await store.scheduleList()).map((row) => [rowKey(row.class, row.name), row]));
  const outcomes: ScheduleOutcome[] = [];
  for (const schedule of schedules) {
    const outcome = await advanceSchedule(
      store,
      schedule,
      rows.get(rowKey(schedule.class, schedule.config.name)),
      options,
    );
    if (outcome !== undefined) outcomes.push(outcome);
  }
  return outcomes;
}

async function advanceSchedule(
  store: SchedulerStore,
  schedule: Schedule,
  row: ScheduleRow | undefined,
  options: SchedulePassOptions,
): Promise<ScheduleOutcome | undefined> {
  const { clock, actor } = options;
  const target = { class: schedule.class, name: schedule.config.name, actor };
  const now = clock.now();
  if (row === undefined) {
    const started = await store.scheduleAdvance({ ...target, expected: null, through: now, jobs: [] });
    return started.advanced ? { type: 'started', schedule, through: now } : { type: 'lost', schedule };
  }
  const plan = planOccurrences(schedule.cron, schedule.config.catch_up, row.checked_through, now);
  if (plan.through === undefined) return undefined;
  const limits = { payloadLimitBytes: options.payloadLimitBytes };
  const { payload, priority, name } = schedule.config;
  const jobs = plan.enqueue.map((at) =>
    prepareJob({ class: schedule.class, payload, priority, runAt: at, key: occurrenceKey(name, at) }, clock, limits),
  );
  const { through } = plan;
  const result = await sendTraced(
    jobs,
    () => store.scheduleAdvance({ ...target, expected: row.checked_through, through, jobs }),
    (advance) => (advance.advanced ? advance.jobs : []),
  );
  if (!result.advanced) return { type: 'lost', schedule };
  return {
    type: 'advanced',
    schedule,
    enqueued: result.jobs.map((job, i) => ({ at: plan.enqueue[i] as number, job })),
    skipped: plan.skipped,
  };
}

/** A schedule as `leasehold schedules` and the dashboard show it: the config's fields, its next run (computed), its last run (the database). */
export interface ScheduleView {
  class: string;
  name: string;
  cron: string;
  timezone: string;
  catch_up: CatchUpMode;
  priority: number;
  payload: unknown;
  next_run_at: number | null;
  last_run_at: number | null;
  last_job_id: number | null;
  checked_through: number | null;
}

export function scheduleViews(
  schedules: readonly Schedule[],
  rows: readonly ScheduleRow[],
  now: number,
): ScheduleView[] {
  const byKey = new Map(rows.map((row) => [rowKey(row.class, row.name), row]));
  return schedules.map((schedule) => {
    const { name, cron, timezone, catch_up, priority, payload } = schedule.config;
    const row = byKey.get(rowKey(schedule.class, name));
    return {
      class: schedule.class,
      name,
      cron,
      timezone,
      catch_up,
      priority,
      payload,
      next_run_at: nextOccurrence([schedule], now) ?? null,
      last_run_at: row?.last_run_at ?? null,
      last_job_id: row?.last_job_id ?? null,
      checked_through: row?.checked_through ?? null,
    };
  });
}

/** What `leasehold schedules --json` prints and `Queue.schedules()` returns. */
export interface SchedulesReport {
  now: number;
  schedules: ScheduleView[];
}

/** The config's schedules, each with its next run at `now` and its last run as the database knows it. */
export async function schedulesReport(
  store: Pick<SchedulerStore, 'scheduleList'>,
  config: Pick<LeaseholdConfig, 'classes'>,
  now: number,
): Promise<SchedulesReport> {
  return { now, schedules: scheduleViews(schedulesOf(config.classes), await store.scheduleList(), now) };
}

/**
 * Enqueue one job of the schedule now, as an occurrence would be (its payload
 * and priority), past its cursor: the next occurrence still comes once. Its
 * key names the schedule and says it was run by hand.
 */
export async function runScheduleNow(
  store: Pick<ProducerStore, 'jobInsert'>,
  schedule: Schedule,
  options: SchedulePassOptions,
): Promise<InsertedJob> {
  const now = options.clock.now();
  const { payload, priority, name } = schedule.config;
  const job = prepareJob(
    { class: schedule.class, payload, priority, key: `schedule:${name}!run-now@${new Date(now).toISOString()}` },
    options.clock,
    { payloadLimitBytes: options.payloadLimitBytes },
  );
  const [inserted] = await sendTraced([job], () => store.jobInsert({ jobs: [job], actor: options.actor }));
  return inserted as InsertedJob;
}

function rowKey(cls: string, name: string): string {
  return JSON.stringify([cls, name]);
}
