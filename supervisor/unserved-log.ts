import type { Logger } from '../src/log.js';
import { ageSeconds, servedOrPaused, type QueueStore } from '../src/reports/queue-age.js';
import { unlessDbFault } from '../src/store/faults.js';
import type { SupervisorStore } from '../src/store/types.js';
import { Every } from './every.js';

export interface UnservedLogOptions {
  store: QueueStore & Pick<SupervisorStore, 'clock'>;
  logger: Logger;
  intervalMs: number;
  /** The classes this supervisor has a live child of now: served, with no need to ask the registry. */
  servedHere: () => ReadonlySet<string>;
}

/**
 * Logs CLASS_UNSERVED once when a class has due jobs and no live child on any
 * host (a typo in an enqueue, a class dropped from every config), and again
 * only after it was served and then lost its workers anew. A paused class is
 * not unserved: nothing runs on purpose (CLASS_PAUSED says so).
 */
export class UnservedLog {
  private readonly schedule: Every;
  private readonly unserved = new Set<string>();

  constructor(private readonly options: UnservedLogOptions) {
    const onError = unlessDbFault((error) =>
      options.logger.warn('could not read which classes are served', { err: error }),
    );
    // No check at start: this supervisor's own children are still registering.
    this.schedule = new Every(options.intervalMs, () => this.check(), onError);
  }

  start(): void {
    this.schedule.start();
  }

  /** Safe twice, or before start. */
  async stop(): Promise<void> {
    await this.schedule.stop();
  }

  /**
   * Every host runs this check: the registry and the pauses are read only for
   * due classes this supervisor does not serve itself, so a host whose own
   * children serve every due class asks the database one thing.
   */
  private async check(): Promise<void> {
    const { store, logger } = this.options;
    const now = store.clock.now();
    const here = this.options.servedHere();
    const waiting = (await store.statsOldestDue({ now })).filter((row) => !here.has(row.class));
    const covered = waiting.length === 0 ? here : await servedOrPaused(store, now);
    const unservedNow = waiting.filter((row) => !covered.has(row.class));
    for (const { class: name, run_at } of unservedNow) {
      if (this.unserved.has(name)) continue;
      const oldest = ageSeconds(now, run_at);
      logger.warn(
        `class ${name} has jobs due (the oldest waiting ${oldest}s) and no live worker on any host: is it in a config?`,
        { event: 'CLASS_UNSERVED', class: name, oldest_age_seconds: oldest },
      );
    }
    this.unserved.clear();
    for (const row of unservedNow) this.unserved.add(row.class);
  }
}
