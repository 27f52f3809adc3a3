import { setTimeout as sleep } from 'node:timers/promises';
import type { LeaseholdConfig } from '../src/config/schema.js';
import type { Logger } from '../src/log.js';
import { retryDelayFor } from '../src/backoff.js';
import { redactDatabase } from '../src/store/database-url.js';
import { DbAvailability, describeOutage, outageLog, unlessDbFault, watchAvailability } from '../src/store/faults.js';
import { rateLimitsByClass } from '../src/queue/class-controls.js';
import type { MaintenanceStore, RecoveredJob, RetryDelay, SupervisorStore } from '../src/store/types.js';
import { logRecovery } from './recovery-log.js';
import { Sweeper } from './sweeper.js';
import { NO_METRICS, type MetricsSink } from './metrics-sink.js';
import { PauseLog } from './pause-log.js';
import { Retention } from './retention.js';
import { SUPERVISOR_HEARTBEAT_MS as REGISTRY_HEARTBEAT_MS } from '../src/queue/registry.js';
import { ClassPool } from './class-pool.js';
import { HealthWatch } from './health-watch.js';
import { isPidAlive } from './pids.js';
import { HttpServer, type Unhealthy } from './http-server.js';
import { SupervisorMetrics } from './metrics.js';

/** Clock offsets from the database server below this are measurement noise (round trips on a LAN). */
const CLOCK_NOISE_MS = 25;

export interface SupervisorOptions {
  config: LeaseholdConfig;
  store: SupervisorStore & MaintenanceStore;
  logger: Logger;
  supervisorId: string;
  host: string;
}

/**
 * The supervisor: one pool of children per class, a health watch, the
 * sweeper, its own row in `workers`, and the shutdown sequence.
 */
export class Supervisor {
  private readonly pools: ClassPool[];
  private readonly health: HealthWatch;
  private readonly sweeper: Sweeper;
  private readonly retention: Retention;
  private readonly pauseLog: PauseLog;
  /** Only when the config has `http`: /metrics and /healthz. */
  private readonly http: HttpServer | undefined;
  private running = false;
  private readonly metrics: MetricsSink;
  private readonly retryDelay: RetryDelay;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private readonly force = new AbortController();
  /** The store every part uses: each database fault is counted, and logged once per outage. */
  private readonly store: SupervisorStore & MaintenanceStore;
  private readonly availability: DbAvailability;

  constructor(private readonly options: SupervisorOptions) {
    const { config, logger, supervisorId, host } = options;
    this.retryDelay = retryDelayFor(config.classes);
    let sink: MetricsSink = NO_METRICS;
    this.availability = new DbAvailability({ ...outageLog((level, msg, fields) => logger.log(level, msg, fields)), failed: (kind) => sink.dbError(kind) });
    const store = watchAvailability(options.store, this.availability);
    this.store = store;
    const metrics = config.http === null ? undefined : new SupervisorMetrics({ store, supervisorId, classes: config.classes.map((c) => c.name), rateLimits: rateLimitsByClass(config.classes) });
    sink = metrics ?? NO_METRICS;
    this.metrics = sink;
    this.http =
      config.http === null || metrics === undefined
        ? undefined
        : new HttpServer({ ...config.http, registry: metrics.registry, logger, unhealthy: () => this.unhealthy() });
    this.pools = config.classes.map(
      (classConfig) => new ClassPool(classConfig, { store, logger, database: config.database, resultLimitBytes: config.result_limit_bytes, supervisorId, host, retryDelay: this.retryDelay, metrics: sink }),
    );
    const fastestHeartbeat = Math.min(...config.classes.map((c) => c.heartbeat_seconds));
    this.health = new HealthWatch({ store, logger, pools: this.pools, tickMs: clamp(fastestHeartbeat * 500, 100, 1_000), outage: () => this.availability.outage });
    this.sweeper = new Sweeper({
      store,
      logger,
      intervalSeconds: config.sweeper.interval_seconds,
      batchSize: config.sweeper.batch_size,
      retryDelay: this.retryDelay,
      actor: supervisorId,
      metrics: sink,
      onRecovered: (jobs) => this.wakeFor(jobs),
    });
    this.retention = new Retention({ store, logger, policy: config.retention, metrics: sink });
    this.pauseLog = new PauseLog({ store, logger, classes: config.classes.map((c) => c.name), intervalMs: REGISTRY_HEARTBEAT_MS });
  }

  /** /healthz: what is not healthy and why (starting, shutting down, the database away for us or a child), or undefined. */
  private async unhealthy(): Promise<Unhealthy | undefined> {
    if (this.stopping !== undefined) return { dependency: 'supervisor', reason: 'shutting down' };
    if (!this.running) return { dependency: 'supervisor', reason: 'starting' };
    const outage = this.availability.outage ?? this.pools.flatMap((pool) => pool.children).find((child) => child.dbOutage !== undefined)?.dbOutage;
    if (outage !== undefined) return { dependency: 'database', reason: `${describeOutage(outage)} for ${((Date.now() - outage.since) / 1000).toFixed(1)}s` };
    try {
      await this.store.ping();
      return undefined;
    } catch (error) {
      return { dependency: 'database', reason: `the database does not answer: ${(error as Error).message}` };
    }
  }

  async start(): Promise<void> {
    const { logger, supervisorId, host, config } = this.options;
    const store = this.store;
    // First, so a port that is taken stops start-up before any child is spawned.
    const httpPort = await this.http?.start();
    if (httpPort !== undefined) {
      logger.info(`serving /metrics and /healthz on http://${config.http?.host}:${httpPort}`, { event: 'HTTP_LISTENING', port: httpPort, host: config.http?.host });
    }
    await store.workerRegister({ id: supervisorId, kind: 'supervisor', host, supervisorId: null, pid: process.pid, class: null, state: 'ready', restarts: 0 });
    await this.checkClock();
    await this.takeBackFromPreviousRuns();
    for (const pool of this.pools) pool.start();
    this.health.start();
    this.sweeper.start();
    this.retention.start();
    this.pauseLog.start();
    this.heartbeatTimer = setInterval(() => {
      void store.workerHeartbeat({ id: supervisorId }).catch(unlessDbFault((error) => logger.warn('supervisor heartbeat failed', { err: error })));
    }, REGISTRY_HEARTBEAT_MS);
    logger.info(`supervisor started: ${config.classes.map((c) => `${c.name}×${c.processes}`).join(', ')} on ${redactDatabase(config.database)}`, {
      event: 'SUPERVISOR_STARTED',
      pid: process.pid,
      host,
      ...(httpPort === undefined ? {} : { http_port: httpPort }),
    });
    this.running = true;
  }

  /**
   * Several hosts, one database (PostgreSQL): log how far this host's clock
   * is from the server's, and warn past half the lease slack (what the slack
   * is: DEFAULT_CLOCK_SKEW_MS), since two hosts each within half of it of the
   * server are within it of each other. Offsets under CLOCK_NOISE_MS are the
   * measurement's own noise.
   */
  private async checkClock(): Promise<void> {
    const { logger, config } = this.options;
    const store = this.store;
    if (store.clockOffsetMs === undefined) return;
    const skewMs = store.clockSkewMs ?? 0;
    const slackMs = skewMs + Math.min(...config.classes.map((c) => (c.lease_seconds - c.heartbeat_seconds) * 1000));
    let offsetMs: number;
    try {
      offsetMs = await store.clockOffsetMs();
    } catch (error) {
      logger.warn("could not measure this host's clock against the database server's", { event: 'CLOCK_OFFSET', err: error });
      return;
    }
    const fields = { event: 'CLOCK_OFFSET', offset_ms: offsetMs, clock_skew_ms: skewMs, lease_slack_ms: slackMs };
    const side = offsetMs === 0 ? "in step with the database server's" : `${Math.abs(offsetMs)} ms ${offsetMs > 0 ? 'behind' : 'ahead of'} the database server's`;
    if (Math.abs(offsetMs) <= Math.max(slackMs / 2, CLOCK_NOISE_MS)) {
      logger.info(`this host's clock is ${side} (lease slack ${slackMs} ms)`, fields);
      return;
    }
    logger.warn(
      `this host's clock is ${side}, over half the lease slack (${slackMs} ms): another host's sweeper may take back leases of live workers ` +
        '(fencing still holds, the job runs again); keep hosts on NTP, or add clock_skew_ms to the database URL',
      fields,
    );
  }

  /**
   * Children of an earlier supervisor on this host whose pids are gone held
   * leases nobody will renew: take them back now instead of waiting for them
   * to expire. Live pids are left alone (still winding down; the sweeper is
   * the backstop). Only workers recorded with this supervisor's own host
   * identity: another host's pids mean nothing here, its dead workers' jobs
   * come back through lease expiry and the sweeper.
   */
  private async takeBackFromPreviousRuns(): Promise<void> {
    const { logger, supervisorId, host } = this.options;
    const store = this.store;
    for (const worker of await store.workerListLiveOnHost({ host })) {
      if (worker.host !== host || worker.id === supervisorId || isPidAlive(worker.pid)) continue;
      if (worker.kind === 'child') {
        const recovered = await store.leasesRecoverByOwner({
          ownerId: worker.id,
          errorCode: 'WORKER:CRASHED',
          errorDetail: `child pid ${worker.pid} of an earlier supervisor is gone`,
          event: 'RECOVERED',
          actor: supervisorId,
          retryDelay: this.retryDelay,
        });
        for (const job of recovered) logRecovery(logger.child({ class: worker.class ?? undefined }), job, 'WORKER:CRASHED');
        this.wakeFor(recovered);
        this.metrics.jobsRecovered(recovered, 'WORKER:CRASHED', 'startup');
      }
      await store.workerExit({ id: worker.id, state: 'exited', exitCode: null, exitSignal: null });
    }
  }

  /** Route jobs taken back to their class's pool, which wakes its children when they are due. */
  private wakeFor(jobs: readonly RecoveredJob[]): void {
    for (const pool of this.pools) pool.wakeFor(jobs.filter((job) => job.class === pool.config.name));
  }

  /**
   * Stop claiming, let running jobs finish within shutdown_grace_seconds,
   * then stop the rest and hand their jobs back without spending a retry.
   * Safe to call twice; `force()` cuts the waiting short.
   */
  shutdown(): Promise<void> {
    this.stopping ??= this.drainAndStop();
    return this.stopping;
  }

  /** A second signal: stop waiting for running jobs. */
  forceShutdown(): void {
    this.options.logger.warn('second signal: not waiting for running jobs', { event: 'SHUTDOWN_FORCED' });
    this.force.abort();
    void this.shutdown();
  }

  private async drainAndStop(): Promise<void> {
    const { logger, config, supervisorId } = this.options;
    const store = this.store;
    const children = () => this.pools.flatMap((pool) => pool.children);
    logger.info(`shutting down: draining ${children().length} children (grace ${config.shutdown_grace_seconds}s)`, { event: 'SHUTDOWN_STARTED' });
    for (const pool of this.pools) pool.stopRestarting();
    await this.sweeper.stop();
    await this.retention.stop();
    await this.pauseLog.stop();
    for (const child of children()) child.send({ type: 'drain' });
    await this.waitForExit(children(), config.shutdown_grace_seconds * 1000);

    const remaining = children();
    if (remaining.length > 0) {
      logger.warn(`grace over: stopping ${remaining.length} children, their jobs go back to the queue`, { event: 'SHUTDOWN_GRACE_OVER' });
      for (const child of remaining) child.send({ type: 'stop', reason: 'shutdown grace over' });
      const graceMs = Math.max(...remaining.map((child) => child.config.kill_grace_seconds * 1000));
      await this.waitForExit(remaining, graceMs);
      for (const child of children()) {
        logger.warn('child did not stop in time: killing it', { event: 'CHILD_KILLED', class: child.config.name, pid: child.pid, reason: 'shutdown' });
        child.forceKill('shutdown', 'LEASE:RELEASED', 'shutdown');
      }
      await Promise.all(children().map((child) => child.exited));
    }
    await this.health.stop();
    await Promise.all(this.pools.map((pool) => pool.settled()));
    clearInterval(this.heartbeatTimer);
    await store.workerExit({ id: supervisorId, state: 'exited', exitCode: 0, exitSignal: null });
    await this.http?.stop();
    logger.info('shutdown complete', { event: 'SHUTDOWN_COMPLETE' });
  }

  /** Wait until the children exit, the time is up, or a second signal says stop waiting. */
  private async waitForExit(children: { exited: Promise<unknown> }[], timeoutMs: number): Promise<void> {
    const signal = this.force.signal;
    if (children.length === 0 || signal.aborted) return;
    await Promise.race([Promise.all(children.map((child) => child.exited)), sleep(timeoutMs, undefined, { signal }).catch(() => undefined)]);
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
