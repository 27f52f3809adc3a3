import type { Clock } from '../src/clock.js';
import { unlessDbFault } from '../src/store/faults.js';
import type { Logger } from '../src/log.js';
import { pruneFinishedJobs, type PruneReport, type RetentionPolicy } from '../src/queue/retention.js';
import type { MaintenanceStore } from '../src/store/types.js';
import { Every } from './every.js';
import { NO_METRICS, type MetricsSink } from './metrics-sink.js';

export interface RetentionOptions {
  store: MaintenanceStore;
  logger: Logger;
  policy: RetentionPolicy;
  clock?: Clock;
  metrics?: MetricsSink;
}

/** The supervisor's retention schedule: a prune pass (src/queue/retention.ts) every `interval_seconds`, logged. */
export class Retention {
  private readonly schedule: Every;
  /** Every prune in flight, scheduled or called directly: stop() awaits them. */
  private readonly running = new Set<Promise<PruneReport>>();
  private stopped = false;
  private readonly clock: Clock;
  private readonly metrics: MetricsSink;

  constructor(private readonly options: RetentionOptions) {
    this.clock = options.clock ?? options.store.clock;
    this.metrics = options.metrics ?? NO_METRICS;
    this.schedule = new Every(
      options.policy.interval_seconds * 1000,
      () => this.prune(),
      unlessDbFault((error) => options.logger.error('retention failed', { err: error, event: 'RETENTION' })),
    );
  }

  /** Prune every `interval_seconds` until stop(). */
  start(): void {
    this.schedule.start();
  }

  /** No more runs; a prune in flight stops after its current batch. Safe twice, or before start. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.schedule.stop();
    await Promise.allSettled([...this.running]);
  }

  /** One pass over every terminal status (or, dry run, only count what it would delete). */
  prune(options: { dryRun?: boolean } = {}): Promise<PruneReport> {
    const run = this.run(options.dryRun ?? false);
    this.running.add(run);
    void run.catch(() => undefined).finally(() => this.running.delete(run));
    return run;
  }

  private async run(dryRun: boolean): Promise<PruneReport> {
    const { store, policy, logger } = this.options;
    const report = await pruneFinishedJobs(store, policy, {
      now: this.clock.now(),
      dryRun,
      stopped: () => this.stopped,
      onDeleted: (status, count) => this.metrics.jobsPruned(status, count),
    });
    if (dryRun) return report;
    const fields = {
      event: 'RETENTION',
      deleted: report.total,
      ...Object.fromEntries(report.by_status.map((line) => [line.status.toLowerCase(), line.count])),
      duration_ms: report.duration_ms,
      complete: report.complete,
    };
    if (report.total > 0) {
      logger.info(`retention deleted ${report.total} finished job(s) with their attempts and events`, fields);
    } else {
      logger.debug('retention: nothing to delete', fields);
    }
    return report;
  }
}
