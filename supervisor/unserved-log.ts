import type { Logger } from '../src/log.js';
import { collectQueues } from '../src/reports/queue-age.js';
import { unlessDbFault } from '../src/store/faults.js';
import type { SupervisorStore } from '../src/store/types.js';
import { Every } from './every.js';

export interface UnservedLogOptions {
  store: SupervisorStore;
  logger: Logger;
  intervalMs: number;
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

  private async check(): Promise<void> {
    const { store, logger } = this.options;
    const queues = await collectQueues(store, store.clock.now(), []);
    const unservedNow = new Set(queues.filter((q) => q.unserved).map((q) => q.class));
    for (const q of queues) {
      if (!q.unserved || this.unserved.has(q.class)) continue;
      logger.warn(
        `class ${q.class} has jobs due (the oldest waiting ${q.oldest_age_seconds}s) and no live worker on any host: is it in a config?`,
        {
          event: 'CLASS_UNSERVED',
          class: q.class,
          oldest_age_seconds: q.oldest_age_seconds,
        },
      );
    }
    this.unserved.clear();
    for (const name of unservedNow) this.unserved.add(name);
  }
}
