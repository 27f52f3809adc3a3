/**
 * This host's wall clock against the store's time, watched while the
 * supervisor runs: CLOCK_OFFSET when the offset crosses the warning line,
 * and again when it comes back under it (the first check, at start, is
 * always logged); on SQLite, the shared timeline is also moved towards the
 * wall clock, a bounded step at a time (src/store/sqlite/file-clock.ts).
 */
import type { Logger } from '../src/log.js';
import { unlessDbFault } from '../src/store/faults.js';
import type { SupervisorStore } from '../src/store/types.js';
import { Every } from './every.js';

/** Past this, a host's own clock is worth an operator's look: timestamps it writes itself are off by that much. */
export const CLOCK_OFFSET_WARN_MS = 1_000;
/** The offset is read from memory, no round trip: checking often costs nothing, and logs only on a crossing. */
const CHECK_MS = 5_000;
/** How often the SQLite timeline takes a step towards the wall clock. */
const FOLLOW_MS = 60_000;

/** This host's wall clock minus the store's time, in ms: positive when the host is ahead. */
export function clockOffsetMs(store: Pick<SupervisorStore, 'clock'>): number {
  return Date.now() - store.clock.now();
}

export interface ClockWatchOptions {
  store: Pick<SupervisorStore, 'clock' | 'driver' | 'clockFollowWall'>;
  logger: Logger;
}

export class ClockWatch {
  private readonly checks: Every;
  private readonly follows: Every;
  private over: boolean | undefined;

  constructor(private readonly options: ClockWatchOptions) {
    const onError = unlessDbFault((error) =>
      options.logger.warn('could not move the time of this database file towards the wall clock', { err: error }),
    );
    this.checks = new Every(CHECK_MS, async () => this.check(), onError);
    this.follows = new Every(FOLLOW_MS, async () => options.store.clockFollowWall?.(), onError);
  }

  start(): void {
    if (this.over === undefined) this.check();
    this.checks.start();
    this.follows.start();
  }

  /** Safe twice, or before start. */
  async stop(): Promise<void> {
    await this.checks.stop();
    await this.follows.stop();
  }

  private check(): void {
    const { store, logger } = this.options;
    const offsetMs = clockOffsetMs(store);
    const over = Math.abs(offsetMs) > CLOCK_OFFSET_WARN_MS;
    if (over === this.over) return;
    const first = this.over === undefined;
    this.over = over;
    const fields = { event: 'CLOCK_OFFSET', offset_ms: offsetMs, warn_ms: CLOCK_OFFSET_WARN_MS };
    const time = store.driver === 'postgres' ? "the database server's" : 'the time of this database file';
    const side = `${Math.abs(offsetMs)} ms ${offsetMs >= 0 ? 'ahead of' : 'behind'} ${time}`;
    if (!over) {
      logger.info(`this host's clock is ${side}${first ? '' : `: back within ${CLOCK_OFFSET_WARN_MS} ms`}`, fields);
      return;
    }
    const why =
      store.driver === 'postgres'
        ? "leases and run_at are on the server's clock, so none is at stake, but what this host stamps itself " +
          "(log lines, a handler's Date.now(), a run_at it computes) is off; keep hosts on NTP"
        : 'its wall clock stepped; leases and run_at stay on the timeline of the file, which follows the wall ' +
          'clock again a step at a time';
    logger.warn(`this host's clock is ${side}, over ${CLOCK_OFFSET_WARN_MS} ms: ${why}`, fields);
  }
}
