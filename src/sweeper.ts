import type { Logger } from './log.js';
import { NO_METRICS, type MetricsSink } from './metrics-sink.js';
import type { RecoveredJob, RetryDelay, Store } from './store/types.js';

export interface SweeperOptions {
  store: Store;
  logger: Logger;
  intervalSeconds: number;
  batchSize: number;
  retryDelay: RetryDelay;
  actor: string;
  /** Told of every lease taken back; none by default. */
  metrics?: MetricsSink;
  /** Told of the jobs each pass took back, so idle workers can be woken when they are due. */
  onRecovered?: (jobs: RecoveredJob[]) => void;
}

/**
 * The backstop of guarantee 4: takes back the leases that ran out (their
 * worker died with its supervisor, or went silent), batch by batch.
 */
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

  /** One full pass: batches until a batch comes back short. */
  async sweep(): Promise<RecoveredJob[]> {
    const { store, batchSize, retryDelay, actor, logger } = this.options;
    const recovered: RecoveredJob[] = [];
    for (;;) {
      const batch = await store.leasesRecoverExpired({
        limit: batchSize,
        errorCode: 'LEASE:EXPIRED',
        errorDetail: 'lease expired without a heartbeat',
        event: 'RECOVERED',
        actor,
        retryDelay,
      });
      recovered.push(...batch);
      if (batch.length < batchSize) break;
    }
    for (const job of recovered) logRecovery(logger, job, 'LEASE:EXPIRED');
    (this.options.metrics ?? NO_METRICS).jobsRecovered(recovered, 'LEASE:EXPIRED', 'sweeper');
    if (recovered.length > 0) this.options.onRecovered?.(recovered);
    if (recovered.length > 0) logger.info(`sweep took back ${recovered.length} expired lease(s)`, { event: 'SWEEP', recovered: recovered.length });
    return recovered;
  }
}

/** One log line per job taken back: where it went and why. */
export function logRecovery(logger: Logger, job: RecoveredJob, code: string): void {
  const fields = { event: 'JOB_RECOVERED', job_id: job.id, class: job.class, attempt: job.attempt, code, outcome: job.status, owner_id: job.ownerId };
  if (job.released) {
    logger.info(`job ${job.id} handed back unstarted (${code}), no retry spent`, fields);
  } else if (job.status === 'QUEUED') {
    logger.warn(`job ${job.id} taken back (${code}), retry at ${new Date(job.runAt ?? 0).toISOString()}`, fields);
  } else if (job.status === 'FAILED') {
    logger.error(`job ${job.id} taken back (${code}) and dead-lettered: no retries left`, { ...fields, event: 'JOB_DEAD_LETTERED' });
  } else {
    logger.info(`job ${job.id} taken back (${code}) and cancelled as requested`, fields);
  }
}
