import type { Logger } from '../src/log.js';
import { unlessDbFault } from '../src/store/faults.js';
import { LEASE_EXPIRED, recoverExpiredLeases, type SweepOptions } from '../src/queue/sweep.js';
import type { RecoveredJob, MaintenanceStore } from '../src/store/types.js';
import { endExpiredAttempts } from './attempt-spans.js';
import { Every } from './every.js';
import { NO_METRICS, type MetricsSink } from './metrics-sink.js';
import { logRecovery } from './job-log.js';

export interface SweeperOptions extends SweepOptions {
  store: MaintenanceStore;
  logger: Logger;
  intervalSeconds: number;
  /** Told of every lease taken back; none by default. */
  metrics?: MetricsSink;
  /** Told of the jobs each pass took back, so idle workers can be woken when they are due. */
  onRecovered?: (jobs: RecoveredJob[]) => void;
}

/** The supervisor's sweep schedule: a sweep (src/queue/sweep.ts) every `intervalSeconds`, logged. */
export class Sweeper {
  private readonly schedule: Every;

  constructor(private readonly options: SweeperOptions) {
    this.schedule = new Every(
      options.intervalSeconds * 1000,
      () => this.sweep(),
      unlessDbFault((error) => options.logger.error('sweep failed', { err: error, event: 'SWEEP' })),
    );
  }

  start(): void {
    this.schedule.start();
  }

  /** No more sweeps; resolves once a sweep in flight has ended. */
  async stop(): Promise<void> {
    await this.schedule.stop();
  }

  async sweep(): Promise<RecoveredJob[]> {
    const { store, logger } = this.options;
    const recovered = await recoverExpiredLeases(store, this.options);
    for (const job of recovered) logRecovery(logger, job, LEASE_EXPIRED.code);
    endExpiredAttempts(recovered, LEASE_EXPIRED);
    (this.options.metrics ?? NO_METRICS).jobsRecovered(recovered, LEASE_EXPIRED.code, 'sweeper');
    if (recovered.length > 0) {
      this.options.onRecovered?.(recovered);
      logger.info(`sweep took back ${recovered.length} expired lease(s)`, {
        event: 'SWEEP',
        recovered: recovered.length,
      });
    }
    return recovered;
  }
}
