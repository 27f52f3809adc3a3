import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../src/log.js';
import { unlessDbFault } from '../src/store/faults.js';
import type { MaintenanceStore } from '../src/store/types.js';
import { Every } from './every.js';

/**
 * How often the supervisor sums what ended: the reads take what it has not summed from the jobs, so this and the
 * driver's grace bound their cost at any throughput. A roll-up with nothing new to sum writes nothing.
 */
export const ROLLUP_INTERVAL_MS = 1_000;
/**
 * Minutes summed per transaction. A roll-up catching up (a new store's day,
 * or after the supervisors were down) takes turns with the workers: a few
 * minutes at a time keep each hold of SQLite's write lock short.
 */
export const MINUTES_PER_ROLL_UP = 5;
/** Between two catch-up transactions: room for the workers' writes (a busy handler sleeping between its tries finds the lock free). */
const CATCH_UP_PAUSE_MS = 20;

/** The supervisor's stats roll-up (src/store/stats-window.ts): at start, then every ROLLUP_INTERVAL_MS. */
export class StatsRollup {
  private readonly schedule: Every;
  private stopped = false;
  /** The roll-up at start, which runs outside the schedule. */
  private first: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: { store: MaintenanceStore; logger: Logger }) {
    this.schedule = new Every(
      ROLLUP_INTERVAL_MS,
      () => this.rollUp(),
      unlessDbFault((error) => this.failed(error)),
    );
  }

  start(): void {
    this.first = this.rollUp().catch(unlessDbFault((error) => this.failed(error)));
    this.schedule.start();
  }

  /** No more roll-ups; resolves once the one in flight has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.schedule.stop(), this.first]);
  }

  /** The roll-up in flight: the schedule's tick joins it rather than catching up beside it. */
  private running: Promise<number> | undefined;

  /** Sums every minute that ended, a few per transaction, until none is left or stop(); how many it summed. */
  rollUp(): Promise<number> {
    this.running ??= this.sumAll().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sumAll(): Promise<number> {
    let total = 0;
    let summed: number;
    do {
      summed = await this.options.store.statsRollUp({ maxMinutes: MINUTES_PER_ROLL_UP });
      total += summed;
      if (summed >= MINUTES_PER_ROLL_UP) await sleep(CATCH_UP_PAUSE_MS);
    } while (summed >= MINUTES_PER_ROLL_UP && !this.stopped);
    if (total > 0)
      this.options.logger.debug(`stats rollup summed ${total} minute(s)`, { event: 'STATS_ROLLUP', minutes: total });
    return total;
  }

  private failed(error: unknown): void {
    this.options.logger.warn('stats roll-up failed: the stats read those minutes from the jobs until it succeeds', {
      err: error,
      event: 'STATS_ROLLUP',
    });
  }
}
