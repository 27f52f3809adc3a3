/** The Store's role for cron schedules (the supervisor's scheduler, `leasehold schedules`) and the rows it exchanges. */
import type { Connection, InsertedJob, NewJob } from './data.js';

/** A schedule's row in `schedules`: how far its occurrences are handled, and its last run. */
export interface ScheduleRow {
  class: string;
  name: string;
  /** Every occurrence at or before this time is handled: enqueued, or skipped as its catch_up says. */
  checked_through: number;
  /** The latest occurrence enqueued, and its job; null before the first. */
  last_run_at: number | null;
  last_job_id: number | null;
  updated_at: number;
  /** Who moved it last (a supervisor id). */
  updated_by: string;
}

/** Move a schedule's `checked_through` from what was read to `through`, enqueueing the occurrences in between that are due. */
export interface ScheduleAdvance {
  class: string;
  name: string;
  /** `checked_through` as read; null: the schedule has no row yet. */
  expected: number | null;
  through: number;
  /** The occurrences' jobs, oldest first, each with its idempotency key; none to only skip or start. */
  jobs: NewJob[];
  actor: string;
}

/** advanced: false when another process moved the schedule first (it enqueued those occurrences). */
export type ScheduleAdvanceResult = { advanced: false } | { advanced: true; jobs: InsertedJob[] };

/** Cron schedules: the supervisor's scheduler, and `leasehold schedules`. */
export interface SchedulerStore extends Connection {
  scheduleList(): Promise<ScheduleRow[]>;
  /**
   * One transaction: compare-and-set the schedule's `checked_through` from
   * `expected` to `through` (a new row when `expected` is null), and only when
   * that took, insert the jobs and record the last as the schedule's last
   * run. Two processes advancing one schedule from the same point: one wins,
   * so each occurrence is enqueued once, even after its job was pruned.
   */
  scheduleAdvance(params: ScheduleAdvance): Promise<ScheduleAdvanceResult>;
}
