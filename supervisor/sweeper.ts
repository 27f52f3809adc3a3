import type { Logger } from '../src/log.js';
import { recoverExpiredLeases, type SweepOptions } from '../src/queue/sweep.js';
import type { RecoveredJob, MaintenanceStore } from '../src/store/types.js';
import { NO_METRICS, type MetricsSink } from './metrics-sink.js';
import { logRecovery } from './recovery-log.js';

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
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly options: SweeperOptions) {}

  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setInterval(() => {
      this.inFlight ??= this.sweep()
        .catch((error: unknown) => void this.options.logger.error('sweep failed', { err: error, event: 'SWEEP' }))
        .finally(() => (this.inFlight = undefined));
    }, this.options.intervalSeconds * 1000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.inFlight;
  }

  async sweep(): Promise<RecoveredJob[]> {
    const { store, logger } = this.options;
    const recovered = await recoverExpiredLeases(store, this.options);
    for (const job of recovered) logRecovery(logger, job, 'LEASE:EXPIRED');
    (this.options.metrics ?? NO_METRICS).jobsRecovered(recovered, 'LEASE:EXPIRED', 'sweeper');
    if (recovered.length > 0) this.options.onRecovered?.(recovered);
    if (recovered.length > 0) logger.info(`sweep took back ${recovered.length} expired lease(s)`, { event: 'SWEEP', recovered: recovered.length });
    return recovered;
  }
}
