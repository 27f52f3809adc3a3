/**
 * The supervisor's chores on the database, each on its own timer beside the
 * children it supervises: the sweeper, retention, the stats rollup, the
 * scheduler, the logs of paused and unserved classes, and the clock watch.
 * A reload restarts those whose settings changed.
 */
import diff from 'microdiff';
import type { LeaseholdConfig } from '../src/config/schema.js';
import type { Logger } from '../src/log.js';
import { SUPERVISOR_HEARTBEAT_MS as REGISTRY_HEARTBEAT_MS } from '../src/queue/registry.js';
import type { SchedulerStore } from '../src/store/schedules.js';
import type { MaintenanceStore, RecoveredJob, RetryDelay, SupervisorStore } from '../src/store/types.js';
import { ClockWatch } from './clock-watch.js';
import type { MetricsSink } from './metrics-sink.js';
import { PauseLog } from './pause-log.js';
import { Retention } from './retention.js';
import { Scheduler } from './scheduler.js';
import { StatsRollup } from './stats-rollup.js';
import { Sweeper } from './sweeper.js';
import { UnservedLog } from './unserved-log.js';

export interface ChoresOptions {
  store: SupervisorStore & MaintenanceStore & SchedulerStore;
  logger: Logger;
  supervisorId: string;
  metrics: MetricsSink;
  /** Each class's backoff as the config in force says. */
  retryDelay: RetryDelay;
  /** The config in force. */
  config: () => LeaseholdConfig;
  /** The sweeper took these jobs back. */
  onRecovered: (jobs: readonly RecoveredJob[]) => void;
  /** The classes this supervisor has a live child of now. */
  servedHere: () => ReadonlySet<string>;
}

export class Chores {
  private sweeper: Sweeper;
  private retention: Retention;
  private readonly statsRollup: StatsRollup;
  private scheduler: Scheduler;
  private readonly pauseLog: PauseLog;
  private readonly unservedLog: UnservedLog;
  private readonly clockWatch: ClockWatch;

  constructor(private readonly options: ChoresOptions) {
    const { store, logger } = options;
    this.sweeper = this.newSweeper();
    this.retention = this.newRetention();
    this.statsRollup = new StatsRollup({ store, logger });
    this.scheduler = this.newScheduler();
    this.pauseLog = new PauseLog({
      store,
      logger,
      classes: () => options.config().classes.map((c) => c.name),
      intervalMs: REGISTRY_HEARTBEAT_MS,
    });
    this.unservedLog = new UnservedLog({
      store,
      logger,
      intervalMs: REGISTRY_HEARTBEAT_MS,
      servedHere: options.servedHere,
    });
    this.clockWatch = new ClockWatch({ store, logger });
  }

  private newSweeper(): Sweeper {
    const { sweeper } = this.options.config();
    return new Sweeper({
      store: this.options.store,
      logger: this.options.logger,
      intervalSeconds: sweeper.interval_seconds,
      batchSize: sweeper.batch_size,
      retryDelay: this.options.retryDelay,
      actor: this.options.supervisorId,
      metrics: this.options.metrics,
      onRecovered: (jobs) => this.options.onRecovered(jobs),
    });
  }

  private newRetention(): Retention {
    const { store, logger, metrics } = this.options;
    return new Retention({ store, logger, policy: this.options.config().retention, metrics });
  }

  private newScheduler(): Scheduler {
    const { classes, payload_limit_bytes } = this.options.config();
    return new Scheduler({
      store: this.options.store,
      logger: this.options.logger,
      classes,
      payloadLimitBytes: payload_limit_bytes,
      actor: this.options.supervisorId,
    });
  }

  start(): void {
    this.clockWatch.start();
    this.sweeper.start();
    this.retention.start();
    this.statsRollup.start();
    this.scheduler.start();
    this.pauseLog.start();
    this.unservedLog.start();
  }

  async stop(): Promise<void> {
    await this.sweeper.stop();
    await this.retention.stop();
    await this.statsRollup.stop();
    await this.scheduler.stop();
    await this.pauseLog.stop();
    await this.unservedLog.stop();
    await this.clockWatch.stop();
  }

  /**
   * A reload put `next` in force (the config in force before was `before`):
   * the sweeper and retention start again with their new settings if they
   * changed, and the scheduler if anything did (`changed`).
   */
  async reload(before: LeaseholdConfig, next: LeaseholdConfig, changed: boolean): Promise<void> {
    if (diff(before.sweeper, next.sweeper).length > 0) {
      await this.sweeper.stop();
      this.sweeper = this.newSweeper();
      this.sweeper.start();
    }
    if (diff(before.retention, next.retention).length > 0) {
      await this.retention.stop();
      this.retention = this.newRetention();
      this.retention.start();
    }
    if (changed) await this.restartScheduler();
  }

  /** Cheap, and safe to redo: the schedules' progress lives in the database, so nothing is enqueued twice or skipped. */
  async restartScheduler(): Promise<void> {
    await this.scheduler.stop();
    this.scheduler = this.newScheduler();
    this.scheduler.start();
  }
}
