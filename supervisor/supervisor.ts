import type { ClassConfig, LeaseholdConfig } from '../src/config/schema.js';
import type { Logger } from '../src/log.js';
import { retryDelayFor } from '../src/backoff.js';
import { redactDatabase } from '../src/store/database-url.js';
import {
  DbAvailability,
  describeOutage,
  outageLog,
  retryWhileAway,
  unlessDbFault,
  watchAvailability,
} from '../src/store/faults.js';
import type { SchedulerStore } from '../src/store/schedules.js';
import type { MaintenanceStore, OperatorStore, RecoveredJob, RetryDelay, SupervisorStore } from '../src/store/types.js';
import { Chores } from './chores.js';
import { NO_METRICS, type MetricsSink } from './metrics-sink.js';
import { SUPERVISOR_HEARTBEAT_MS as REGISTRY_HEARTBEAT_MS } from '../src/queue/registry.js';
import { ChildHandle } from './child-process.js';
import { ClassPool } from './class-pool.js';
import { replaceEditedClasses } from './module-reload.js';
import { ModuleWatch } from './module-watch.js';
import { HealthWatch } from './health-watch.js';
import { StallWatch } from './stall-watch.js';
import type { Writer } from './writer.js';
import type { HttpServer, Unhealthy } from './http-server.js';
import type { httpSide } from './http-side.js';
import { retireChildren } from './retire.js';
import { removeFilesOfDeadSupervisors, takeBackFromPreviousRuns } from './start-up.js';
import { planReload, ReloadVerdicts, type ClassFailure } from './reload.js';

export interface SupervisorOptions {
  config: LeaseholdConfig;
  /** The operator's role is for the dashboard (`http.dashboard`). */
  store: SupervisorStore & MaintenanceStore & SchedulerStore & OperatorStore;
  logger: Logger;
  supervisorId: string;
  host: string;
  /** SQLite: the writer that makes its own writes and its children's (writer.ts). */
  writer?: Writer;
  /** When the config has `http`: http-side.ts, which main.ts loads only then. */
  httpSide?: typeof httpSide;
  /** `--watch`: a class's children are replaced when its modules change on disk (module-watch.ts). */
  watch?: boolean;
}

/**
 * The supervisor: one pool of children per class, a health watch, its
 * chores on the database (the sweeper and the rest: chores.ts), its own row
 * in `workers`, the start-up checks (start-up.ts), reloads, and the shutdown
 * sequence.
 */
export class Supervisor {
  /** The config in force: the one started with, then each reload's. */
  private config: LeaseholdConfig;
  /** One per class, and classes a reload removed until their children are gone (the health watch keeps watching those). */
  private readonly pools: ClassPool<ChildHandle>[];
  private readonly leaving = new Set<ClassPool<ChildHandle>>();
  private readonly health: HealthWatch;
  private readonly stalls: StallWatch;
  private readonly chores: Chores;
  /** Only when the config has `http`: /metrics and /healthz. */
  private readonly http: HttpServer | undefined;
  private running = false;
  private readonly metrics: MetricsSink;
  private backoff: RetryDelay;
  /** Each class's backoff as the config in force says. */
  private readonly retryDelay: RetryDelay = (jobClass, attempt) => this.backoff(jobClass, attempt);
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private reloads: Promise<void> = Promise.resolve();
  private readonly modules: ModuleWatch | undefined;
  private readonly force = new AbortController();
  /** The store every part uses: each database fault is counted, and logged once per outage. */
  private readonly store: SupervisorStore & MaintenanceStore & SchedulerStore & OperatorStore;
  private readonly availability: DbAvailability;
  private readonly verdicts: ReloadVerdicts;

  constructor(private readonly options: SupervisorOptions) {
    const { config, logger, supervisorId } = options;
    this.config = config;
    this.backoff = retryDelayFor(config.classes);
    options.writer?.useClasses(config.classes);
    // Edits are applied in turn with reloads, each against the config in force then.
    this.modules =
      options.watch === true
        ? new ModuleWatch((names) => this.queueReload(() => this.replaceEdited(names)))
        : undefined;
    let sink: MetricsSink = NO_METRICS;
    this.availability = new DbAvailability({
      ...outageLog((level, msg, fields) => logger.log(level, msg, fields)),
      failed: (kind) => sink.dbError(kind),
    });
    const store = watchAvailability(options.writer?.route(options.store) ?? options.store, this.availability);
    this.store = store;
    if (config.http !== null && options.httpSide === undefined)
      throw new Error('the config has http: the supervisor needs http-side.ts (httpSide) to serve it');
    const side =
      config.http === null || options.httpSide === undefined
        ? undefined
        : options.httpSide({
            config: { ...config, http: config.http },
            store,
            supervisorId,
            logger,
            classes: () => this.config.classes,
            unhealthy: () => this.unhealthy(),
          });
    sink = side?.metrics ?? NO_METRICS;
    this.metrics = sink;
    this.http = side?.http;
    this.pools = config.classes.map((classConfig) => this.newPool(classConfig));
    const tickMs = clamp(Math.min(...config.classes.map((c) => c.heartbeat_seconds)) * 500, 100, 1_000);
    this.health = new HealthWatch({ store, logger, pools: this.pools, tickMs, outage: () => this.availability.outage });
    this.stalls = new StallWatch({ store, logger, pools: this.pools, tickMs });
    this.chores = new Chores({
      store,
      logger,
      supervisorId,
      metrics: sink,
      retryDelay: this.retryDelay,
      config: () => this.config,
      onRecovered: (jobs) => this.wakeFor(jobs),
      servedHere: () => new Set(this.pools.filter((pool) => pool.children.length > 0).map((pool) => pool.config.name)),
    });
    this.verdicts = new ReloadVerdicts(logger, {
      pid: process.pid,
      supervisorId,
      configFile: config.file,
      database: config.database,
    });
  }

  private newPool(classConfig: ClassConfig): ClassPool<ChildHandle> {
    const { logger, supervisorId, host } = this.options;
    const { database, result_limit_bytes, statement_timeout_seconds } = this.config;
    return new ClassPool(classConfig, {
      store: this.store,
      startChild: (start, events) => new ChildHandle(start, events, this.options.writer?.socketPath),
      logger,
      database,
      statementTimeoutMs: statement_timeout_seconds * 1000,
      resultLimitBytes: result_limit_bytes,
      supervisorId,
      host,
      retryDelay: this.retryDelay,
      metrics: this.metrics,
    });
  }

  /** /healthz: what is not healthy and why (starting, shutting down, the database away for us or a child), or undefined. */
  private async unhealthy(): Promise<Unhealthy | undefined> {
    if (this.stopping !== undefined) return { dependency: 'supervisor', reason: 'shutting down' };
    if (!this.running) return { dependency: 'supervisor', reason: 'starting' };
    const outage =
      this.availability.outage ??
      this.pools.flatMap((pool) => pool.children).find((child) => child.dbOutage !== undefined)?.dbOutage;
    if (outage !== undefined)
      return {
        dependency: 'database',
        reason: `${describeOutage(outage)} for ${((Date.now() - outage.since) / 1000).toFixed(1)}s`,
      };
    try {
      await this.store.ping();
      return undefined;
    } catch (error) {
      return { dependency: 'database', reason: `the database does not answer: ${(error as Error).message}` };
    }
  }

  /** Its id in the `workers` table and its log lines. */
  get id(): string {
    return this.options.supervisorId;
  }

  /** The config file it runs (a reload reads it again). */
  get configFile(): string {
    return this.config.file;
  }

  /** Resolves once each class's children of now are ready, or have ended before they were. */
  async childrenReady(): Promise<void> {
    await Promise.all(this.pools.flatMap((pool) => pool.children.map((child) => child.ready)));
  }

  async start(): Promise<void> {
    const { logger, supervisorId, host, config } = this.options;
    const store = this.store;
    // First, so a port that is taken stops start-up before any child is spawned.
    const httpPort = await this.http?.start();
    if (httpPort !== undefined) {
      const dashboard = config.http?.dashboard === true;
      logger.info(
        `serving /metrics and /healthz${dashboard ? ' and the dashboard' : ''} on http://${config.http?.host}:${httpPort}`,
        { event: 'HTTP_LISTENING', port: httpPort, host: config.http?.host, dashboard },
      );
    }
    // Each start-up step waits out a database fault (logged once, as an outage, by the watched store): weather, not death.
    await retryWhileAway(() =>
      store.workerRegister({
        id: supervisorId,
        kind: 'supervisor',
        host,
        supervisorId: null,
        pid: process.pid,
        class: null,
        state: 'ready',
        restarts: 0,
      }),
    );
    await retryWhileAway(() =>
      takeBackFromPreviousRuns({
        store,
        logger,
        supervisorId,
        host,
        retryDelay: this.retryDelay,
        metrics: this.metrics,
        wakeFor: (jobs) => this.wakeFor(jobs),
      }),
    );
    removeFilesOfDeadSupervisors();
    for (const pool of this.pools) pool.start();
    this.health.start();
    this.stalls.start();
    this.chores.start();
    this.modules?.watch(config.classes);
    this.heartbeatTimer = setInterval(() => {
      void store
        .workerHeartbeat({ id: supervisorId })
        .catch(unlessDbFault((error) => logger.warn('supervisor heartbeat failed', { err: error })));
    }, REGISTRY_HEARTBEAT_MS);
    logger.info(
      `supervisor started: ${config.classes.map((c) => `${c.name}×${c.processes}`).join(', ')} on ${redactDatabase(config.database)}`,
      {
        event: 'SUPERVISOR_STARTED',
        pid: process.pid,
        host,
        ...(httpPort === undefined ? {} : { http_port: httpPort }),
      },
    );
    this.running = true;
    this.verdicts.started();
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
    const { logger, supervisorId } = this.options;
    const store = this.store;
    const children = this.pools.flatMap((pool) => pool.children);
    logger.info(`shutting down: draining ${children.length} children (grace ${this.config.shutdown_grace_seconds}s)`, {
      event: 'SHUTDOWN_STARTED',
    });
    for (const pool of this.pools) pool.stopRestarting();
    await this.stalls.stop();
    await this.chores.stop();
    this.modules?.close();
    await retireChildren(children, {
      graceMs: this.config.shutdown_grace_seconds * 1000,
      force: this.force.signal,
      logger,
      reason: 'shutdown',
    });
    await this.health.stop();
    await Promise.all(this.pools.map((pool) => pool.settled()));
    clearInterval(this.heartbeatTimer);
    await store.classDisabledClear({ supervisorId });
    await store.workerExit({ id: supervisorId, state: 'exited', exitCode: 0, exitSignal: null });
    await this.http?.stop();
    this.verdicts.stopped();
    logger.info('shutdown complete', { event: 'SHUTDOWN_COMPLETE' });
  }

  /**
   * Read the config file again, check it as start-up does, and apply it
   * without losing or repeating work; or refuse it whole and keep the
   * running one (CONFIG_RELOAD_REJECTED; CONFIG_RELOAD_FAILED for a handler
   * that cannot load). Classes scale, start, drain away or have their
   * children replaced one at a time (ClassPool.reconfigure); a class whose
   * replacement cannot start keeps its old children and config
   * (CONFIG_RELOAD_FAILED). The sweeper and retention restart with their new
   * settings, the scheduler with the new schedules.
   */
  reload(): Promise<void> {
    return this.queueReload(() => this.applyReload());
  }

  /** One reload at a time, in the order asked: each diffs against the one before. */
  private queueReload(apply: () => Promise<void>): Promise<void> {
    this.reloads = this.reloads
      .then(apply)
      .catch((error: unknown) => void this.options.logger.error('config reload failed', { err: error }));
    return this.reloads;
  }

  private async replaceEdited(names: ReadonlySet<string>): Promise<void> {
    if (!this.running || this.stopping !== undefined) return;
    const pools = this.pools.filter((pool) => !this.leaving.has(pool));
    const retire = { graceMs: this.config.shutdown_grace_seconds * 1000, force: this.force.signal };
    await replaceEditedClasses(pools, names, { logger: this.options.logger, retire });
  }

  private async applyReload(): Promise<void> {
    const { logger } = this.options;
    if (!this.running || this.stopping !== undefined)
      return this.verdicts.rejected([
        this.stopping === undefined ? 'the supervisor is still starting' : 'the supervisor is shutting down',
      ]);
    const plan = await planReload(this.config);
    if ('rejected' in plan) return this.verdicts.rejected(plan.rejected);
    if ('failed' in plan) return this.verdicts.failed(plan.failed);
    const { next, changes } = plan;
    const before = this.config;
    this.useConfig(next);
    this.modules?.watch(next.classes);
    logger.level = next.log.level;
    for (const pool of this.pools) pool.logLevelChanged();
    const retire = { graceMs: next.shutdown_grace_seconds * 1000, force: this.force.signal };
    const current = (name: string) => this.pools.find((pool) => pool.config.name === name && !this.leaving.has(pool));
    for (const pool of this.pools.filter(
      (p) => !this.leaving.has(p) && !next.classes.some((c) => c.name === p.config.name),
    )) {
      this.leaving.add(pool);
      void pool.retire(retire).then(() => {
        this.leaving.delete(pool);
        this.pools.splice(this.pools.indexOf(pool), 1);
      });
    }
    const rollouts: Promise<{ previous: ClassConfig; failure: string } | undefined>[] = [];
    for (const classConfig of next.classes) {
      const pool = current(classConfig.name);
      if (pool === undefined) {
        const added = this.newPool(classConfig);
        this.pools.push(added);
        added.start();
        continue;
      }
      const previous = pool.config;
      rollouts.push(
        pool
          .reconfigure(classConfig, next.result_limit_bytes, retire)
          .then((failure) => (failure === undefined ? undefined : { previous, failure })),
      );
    }
    await this.chores.reload(before, next, changes.length > 0);
    const failed = (await Promise.all(rollouts)).filter((rollout) => rollout !== undefined);
    if (failed.length === 0) return this.verdicts.reloaded(changes);
    // Those classes are back on the config their children run: so is the config in force, and the next reload diffs against it.
    const reverted = new Map(failed.map(({ previous }) => [previous.name, previous]));
    this.useConfig(
      Object.freeze({ ...this.config, classes: this.config.classes.map((cls) => reverted.get(cls.name) ?? cls) }),
    );
    await this.chores.restartScheduler();
    const failures: ClassFailure[] = failed.map(({ previous, failure }) => ({
      class: previous.name,
      handler: next.classes.find((c) => c.name === previous.name)?.handler ?? previous.handler,
      error: failure,
    }));
    // A class name may hold dots: a change is the class's when it names the class whole.
    const applied = changes.filter(
      (change) =>
        ![...reverted.keys()].some(
          (name) => change.startsWith(`classes.${name}.`) || change.startsWith(`classes.${name}:`),
        ),
    );
    this.verdicts.failed(failures, applied);
  }

  private useConfig(config: LeaseholdConfig): void {
    this.config = config;
    this.backoff = retryDelayFor(config.classes);
    this.options.writer?.useClasses(config.classes);
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
