import type { Logger } from '../src/log.js';
import { unlessDbFault } from '../src/store/faults.js';
import type { SupervisorStore } from '../src/store/types.js';
import { Every } from './every.js';

export interface PauseLogOptions {
  store: SupervisorStore;
  logger: Logger;
  /** This supervisor's classes now (a reload changes them): only theirs are logged. */
  classes: () => readonly string[];
  intervalMs: number;
}

/**
 * Logs each pause and resume of this supervisor's classes (CLASS_PAUSED,
 * CLASS_RESUMED, with who did it) as it finds them in the database, where
 * `leasehold pause` writes them from any host. A class already paused when
 * the supervisor starts is logged at once: it explains why nothing runs.
 */
export class PauseLog {
  private readonly schedule: Every;
  private readonly paused = new Set<string>();
  private readonly onError: (error: unknown) => void;
  private first: Promise<void> | undefined;

  constructor(private readonly options: PauseLogOptions) {
    this.onError = unlessDbFault((error) => options.logger.warn('could not read the paused classes', { err: error }));
    this.schedule = new Every(options.intervalMs, () => this.check(), this.onError);
  }

  start(): void {
    this.first ??= this.check().catch(this.onError);
    this.schedule.start();
  }

  /** Safe twice, or before start. */
  async stop(): Promise<void> {
    await this.first;
    await this.schedule.stop();
  }

  private async check(): Promise<void> {
    const { store, logger } = this.options;
    const classes = new Set(this.options.classes());
    for (const row of await store.classControlList()) {
      if (!classes.has(row.class)) continue;
      if (row.paused_at !== null && !this.paused.has(row.class)) {
        this.paused.add(row.class);
        logger.warn(`class ${row.class} is paused (by ${row.paused_by}): it claims nothing until resumed`, {
          event: 'CLASS_PAUSED',
          class: row.class,
          paused_by: row.paused_by,
          paused_at: row.paused_at,
        });
      } else if (row.paused_at === null && this.paused.delete(row.class)) {
        logger.info(`class ${row.class} resumed (by ${row.resumed_by})`, {
          event: 'CLASS_RESUMED',
          class: row.class,
          resumed_by: row.resumed_by,
          resumed_at: row.resumed_at,
        });
      }
    }
  }
}
