import type { Clock } from '../src/clock.js';
import type { ClassConfig } from '../src/config/schema.js';
import type { Logger } from '../src/log.js';
import {
  nextOccurrence,
  runSchedules,
  schedulesOf,
  type Schedule,
  type ScheduleOutcome,
} from '../src/queue/schedules.js';
import { unlessDbFault } from '../src/store/faults.js';
import type { SchedulerStore } from '../src/store/schedules.js';

/** The longest sleep between passes, so a clock that jumps is noticed within it. */
const MAX_SLEEP_MS = 60_000;
/** After a failed pass (the database away, say): try again this soon; what came due meanwhile is still on time. */
const RETRY_MS = 1_000;
/** Wake this long after an occurrence, so that a timer firing a hair early still finds it due. */
const WAKE_MARGIN_MS = 5;

export interface SchedulerOptions {
  store: SchedulerStore;
  logger: Logger;
  /** The config's classes: their `schedules` are run. Built anew from a reloaded config. */
  classes: readonly ClassConfig[];
  payloadLimitBytes: number;
  /** This supervisor's id: the schedules' `updated_by`, and the ENQUEUED events' actor. */
  actor: string;
  clock?: Clock;
}

/**
 * The supervisor's cron schedules: a pass (src/queue/schedules.ts) at each
 * occurrence, logged. Every supervisor on the database runs its own; the
 * store's compare-and-set lets one of them enqueue each occurrence.
 */
export class Scheduler {
  private readonly schedules: Schedule[];
  private readonly clock: Clock;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private stopped = false;
  /** A database fault is the outage's to log (DB_UNAVAILABLE); anything else is logged here. */
  private readonly reportFailure: (error: unknown) => void;

  constructor(private readonly options: SchedulerOptions) {
    this.schedules = schedulesOf(options.classes);
    this.clock = options.clock ?? options.store.clock;
    this.reportFailure = unlessDbFault((err) =>
      options.logger.error('schedules pass failed', { err, event: 'SCHEDULE_FAILED' }),
    );
  }

  /** Run a pass now, then at each occurrence until stop(); nothing when no class has a schedule. Safe twice. */
  start(): void {
    if (this.schedules.length === 0 || this.stopped || this.timer !== undefined || this.inFlight !== undefined) return;
    this.tick();
  }

  /** No more passes; resolves once a pass in flight has ended. Safe twice, or before start. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  private tick(): void {
    this.timer = undefined;
    this.inFlight = this.pass()
      .then(
        () => this.sleepMs(),
        (error: unknown) => {
          this.reportFailure(error);
          return RETRY_MS;
        },
      )
      .then((delayMs) => {
        this.inFlight = undefined;
        if (!this.stopped) this.timer = setTimeout(() => this.tick(), delayMs);
      });
  }

  private sleepMs(): number {
    const now = this.clock.now();
    const next = nextOccurrence(this.schedules, now);
    return next === undefined ? MAX_SLEEP_MS : Math.min(MAX_SLEEP_MS, next - now + WAKE_MARGIN_MS);
  }

  private async pass(): Promise<void> {
    const { store, actor, payloadLimitBytes } = this.options;
    for (const outcome of await runSchedules(store, this.schedules, { clock: this.clock, actor, payloadLimitBytes }))
      this.log(outcome);
  }

  private log(outcome: ScheduleOutcome): void {
    const { schedule } = outcome;
    const name = schedule.config.name;
    const logger = this.options.logger.child({ class: schedule.class });
    const fields = { schedule: name };
    switch (outcome.type) {
      case 'started':
        logger.info(`schedule ${name} starts: occurrences after ${iso(outcome.through)} are enqueued`, {
          ...fields,
          event: 'SCHEDULE_STARTED',
        });
        return;
      case 'lost':
        logger.debug(`schedule ${name}: another supervisor enqueued what was due`, fields);
        return;
      case 'advanced':
        if (outcome.skipped !== undefined) {
          const { first, last } = outcome.skipped;
          logger.warn(
            `schedule ${name}: skipped missed occurrences ${iso(first)} to ${iso(last)} (catch_up: ${schedule.config.catch_up})`,
            {
              ...fields,
              event: 'SCHEDULE_SKIPPED',
              catch_up: schedule.config.catch_up,
              first_skipped: first,
              last_skipped: last,
            },
          );
        }
        for (const { at, job } of outcome.enqueued) {
          const occurrence = { ...fields, job_id: job.id, occurrence: at };
          if (job.created)
            logger.info(`schedule ${name}: enqueued job ${job.id} for ${iso(at)}`, {
              ...occurrence,
              event: 'SCHEDULE_ENQUEUED',
            });
          else
            logger.warn(
              `schedule ${name}: the occurrence ${iso(at)} was already enqueued as job ${job.id}`,
              occurrence,
            );
        }
    }
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
