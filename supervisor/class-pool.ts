import type { ClassConfig } from '../src/config/schema.js';
import type { Logger } from '../src/log.js';
import { NO_METRICS, type MetricsSink } from './metrics-sink.js';
import type { ChildToSupervisor, FinishedJob } from '../src/ipc/protocol.js';
import type { RecoveredJob, RecoverParams, RetryDelay, SupervisorStore } from '../src/store/types.js';
import { logRecovery } from './recovery-log.js';
import { ChildHandle, type ChildExit } from './child-process.js';
import { dbFaultOf, unlessDbFault } from '../src/store/faults.js';
import { describeExit } from './exit-reason.js';
import { RESTART_BASE_DELAY_MS, RestartPolicy } from './restart-policy.js';
import { retireChildren, type RetireOptions } from './retire.js';
import { sameChildStart } from './child-start.js';
import { recordDisabled } from './disabled-record.js';

/** A job that has taken down its child this many times in a row is failed as poison. */
export const POISON_THRESHOLD = 3;

export interface PoolDeps {
  store: SupervisorStore;
  logger: Logger;
  /** What every child is handed with its class config: the database, the result cap. */
  database: string;
  resultLimitBytes: number;
  supervisorId: string;
  host: string;
  retryDelay: RetryDelay;
  /** Told of starts, outcomes, take-backs and restarts; none by default. */
  metrics?: MetricsSink;
}

/**
 * The `processes` children of one class: spawns them, hears them, and when
 * one exits takes back its jobs at once and restarts it with backoff (or
 * gives up on a crash loop, or on a handler that cannot load).
 */
export class ClassPool {
  private readonly slots: (ChildHandle | undefined)[];
  /** Per slot: the config version its child was started with (a reload bumps `configVersion` when children must change). */
  private readonly slotVersions: number[] = [];
  private configVersion = 0;
  private restartPolicy: RestartPolicy;
  /** Per slot: the restart waiting out its delay. */
  private readonly restartTimers = new Map<number, NodeJS.Timeout>();
  private readonly wakeTimers = new Set<NodeJS.Timeout>();
  private readonly exitHandling = new Set<Promise<void>>();
  /** Children leaving after a reload, and the rolling replacement of stale ones. */
  private readonly reloading = new Set<Promise<void>>();
  private rolling = false;
  /** Per slot: crashes in a row of children that finished no job (the restart delay doubles with each). */
  private readonly fruitlessCrashes: number[];
  /** Job id -> how many children in a row died while running it. */
  private readonly deaths = new Map<number, number>();
  private readonly logger: Logger;
  private readonly metrics: MetricsSink;
  private generation = 0;
  private restarts = 0;
  private accepting = true;
  disabled: string | undefined;

  constructor(
    public config: ClassConfig,
    private readonly deps: PoolDeps,
  ) {
    this.slots = Array.from({ length: config.processes }, () => undefined);
    this.fruitlessCrashes = this.slots.map(() => 0);
    this.restartPolicy = new RestartPolicy(config.restart);
    this.logger = deps.logger.child({ class: config.name });
    this.metrics = deps.metrics ?? NO_METRICS;
  }

  start(): void {
    for (let slot = 0; slot < this.slots.length; slot++) this.spawn(slot);
  }

  get children(): ChildHandle[] {
    return this.slots.filter((child): child is ChildHandle => child !== undefined && child.alive);
  }

  /**
   * A reload's new config for this class (same name). Scaling spawns or
   * drains the last slots; any other change reaches the children by
   * replacing them gracefully, one at a time, since each was started with its
   * config (a class disabled by its config is tried again).
   */
  reconfigure(next: ClassConfig, resultLimitBytes: number, retire: Omit<RetireOptions, 'logger' | 'reason'>): void {
    const childrenChange = !sameChildStart(this.config, this.deps.resultLimitBytes, next, resultLimitBytes);
    this.config = next;
    this.deps.resultLimitBytes = resultLimitBytes;
    this.restartPolicy = new RestartPolicy(next.restart);
    if (childrenChange) {
      this.configVersion += 1;
      if (this.disabled !== undefined) {
        this.logger.info(`class ${next.name} enabled again: its config changed`, { event: 'CLASS_ENABLED', was: this.disabled });
        this.setDisabled(undefined);
        this.accepting = true;
      }
    }
    const leaving = this.slots.slice(next.processes).filter((child): child is ChildHandle => child?.alive === true && child.retiring === undefined);
    for (const slot of this.restartTimers.keys()) if (slot >= next.processes) this.cancelRestart(slot);
    if (leaving.length > 0) {
      this.logger.info(`scaling ${next.name} down to ${next.processes}: draining ${leaving.length} children`, { event: 'CHILD_DRAINING', pids: leaving.map((c) => c.pid) });
      this.track(retireChildren(leaving, { ...retire, logger: this.logger, reason: 'reload' }));
    }
    for (let slot = 0; slot < next.processes; slot++) if (this.slots[slot]?.alive !== true && !this.restartTimers.has(slot)) this.spawn(slot);
    if (childrenChange) this.track(this.replaceStale(retire));
  }

  /** The class left the config: drain and stop every child, and restart none. */
  retire(retire: Omit<RetireOptions, 'logger' | 'reason'>): Promise<void> {
    this.stopRestarting();
    if (this.disabled !== undefined) this.setDisabled(undefined);
    this.logger.info(`class ${this.config.name} left the config: draining its ${this.children.length} children`, { event: 'CHILD_DRAINING', pids: this.children.map((c) => c.pid) });
    this.track(retireChildren(this.children, { ...retire, logger: this.logger, reason: 'reload' }));
    return this.settled();
  }

  /** Replace, one at a time, the children started with an older config; each replacement spawns as its predecessor exits. */
  private async replaceStale(retire: Omit<RetireOptions, 'logger' | 'reason'>): Promise<void> {
    if (this.rolling) return; // the running pass sees the newest version too
    this.rolling = true;
    try {
      for (;;) {
        const slot = this.slots.findIndex(
          (child, index) => index < this.config.processes && child?.alive === true && child.retiring === undefined && (this.slotVersions[index] ?? 0) < this.configVersion,
        );
        const child = this.slots[slot];
        if (!this.accepting || child === undefined) return;
        this.logger.info(`replacing child ${child.workerId}: its class config changed`, { event: 'CHILD_REPLACED', pid: child.pid, worker_id: child.workerId, slot });
        await retireChildren([child], { ...retire, logger: this.logger, reason: 'reload' });
        await Promise.all([...this.exitHandling]); // which spawns the replacement
        await this.slots[slot]?.ready;
      }
    } finally {
      this.rolling = false;
    }
  }

  private track(work: Promise<void>): void {
    const tracked = work
      .catch((error: unknown) => void this.logger.error('a reload step failed', { err: error }))
      .finally(() => this.reloading.delete(tracked));
    this.reloading.add(tracked);
  }

  private cancelRestart(slot: number): void {
    clearTimeout(this.restartTimers.get(slot));
    this.restartTimers.delete(slot);
  }

  /** No more spawns or restarts (shutdown). */
  stopRestarting(): void {
    this.accepting = false;
    for (const timer of [...this.restartTimers.values(), ...this.wakeTimers]) clearTimeout(timer);
    this.restartTimers.clear();
    this.wakeTimers.clear();
  }

  /**
   * Jobs of this class came back to the queue: wake the idle children when
   * each is due, instead of leaving it to their next poll.
   */
  wakeFor(jobs: readonly RecoveredJob[]): void {
    for (const runAt of new Set(jobs.filter((job) => job.status === 'QUEUED').map((job) => job.runAt ?? Date.now()))) {
      const timer = setTimeout(() => {
        this.wakeTimers.delete(timer);
        for (const child of this.children) child.send({ type: 'wake' });
      }, Math.max(0, runAt - Date.now()));
      this.wakeTimers.add(timer);
    }
  }

  /** Wait for the exit handling in flight (recoveries, registry writes) and the reload steps. */
  async settled(): Promise<void> {
    while (this.exitHandling.size + this.reloading.size > 0) await Promise.all([...this.exitHandling, ...this.reloading]);
  }

  private spawn(slot: number): void {
    if (!this.accepting || this.disabled !== undefined || this.slots[slot]?.alive === true) return;
    this.cancelRestart(slot);
    this.generation += 1;
    const workerId = `${this.deps.supervisorId}/${this.config.name}.${slot}.${this.generation}`;
    const start = { type: 'start' as const, workerId, database: this.deps.database, resultLimitBytes: this.deps.resultLimitBytes, config: this.config };
    const child = new ChildHandle(start, {
      message: (from, message) => this.onMessage(from, message),
      output: (from, stream, line) => {
        const level = stream === 'stderr' ? 'warn' : 'info';
        this.logger.log(level, line, { event: 'CHILD_OUTPUT', pid: from.pid, stream, line });
      },
      exit: (from, exit) => {
        const handling = this.onExit(slot, from, exit)
          .catch((error: unknown) => void this.logger.error('handling a child exit failed', { err: error, pid: from.pid }))
          .finally(() => this.exitHandling.delete(handling));
        this.exitHandling.add(handling);
      },
    });
    this.slots[slot] = child;
    this.slotVersions[slot] = this.configVersion;
    this.logger.info(`spawned child ${workerId}`, { event: 'CHILD_SPAWNED', pid: child.pid, worker_id: workerId, slot });
    void this.deps.store
      .workerRegister({
        id: workerId,
        kind: 'child',
        host: this.deps.host,
        supervisorId: this.deps.supervisorId,
        pid: child.pid,
        class: this.config.name,
        state: 'starting',
        restarts: this.restarts,
      })
      .catch(unlessDbFault((error) => this.logger.error('could not register a child', { err: error, pid: child.pid })));
  }

  private onMessage(child: ChildHandle, message: ChildToSupervisor): void {
    const labels = { pid: child.pid };
    switch (message.type) {
      case 'ready':
        child.markReady();
        this.logger.info('child ready', { ...labels, event: 'CHILD_READY' });
        void this.deps.store.workerHeartbeat({ id: child.workerId, state: 'ready' }).catch(() => undefined);
        return;
      case 'startup-failed':
        child.startupError = message.error.message;
        this.logger.error(`child could not start: ${message.error.message}`, { ...labels, err: message.error });
        return;
      case 'job-started':
        child.jobStarted(message);
        this.metrics.jobStarted(this.config.name);
        return;
      case 'jobs-finished':
        for (const job of message.jobs) this.onJobFinished(child, job);
        return;
      case 'log':
        this.logger.log(message.level, message.msg, { ...message.fields, ...labels });
        return;
      case 'pong':
        return; // heard: ChildHandle keeps the time
      case 'db-error':
        this.metrics.dbError(message.kind);
        return;
      case 'db-outage':
        child.dbOutage = message.outage ?? undefined;
        return;
    }
  }

  private onJobFinished(child: ChildHandle, message: FinishedJob): void {
    child.started.delete(message.jobId);
    child.jobsFinished += 1;
    if (child.job?.jobId === message.jobId) {
      child.job = undefined;
      if (child.state === 'busy') child.state = 'ready';
    }
    this.deaths.delete(message.jobId);
    this.metrics.jobFinished(this.config.name, message.outcome, message.durationMs);
    if (message.cpuMs !== undefined && message.peakRssBytes !== undefined) this.metrics.jobCost(this.config.name, { cpuMs: message.cpuMs, peakRssBytes: message.peakRssBytes });
    const fields = { pid: child.pid, job_id: message.jobId, attempt: message.attempt, duration_ms: message.durationMs, err: message.error };
    const code = message.error?.code;
    switch (message.outcome) {
      case 'SUCCEEDED':
        // Once a job: winston formats an entry before its transports drop it (about 7 µs a dropped line), so the level is asked first.
        if (this.logger.isLevelEnabled('debug')) this.logger.debug(`job ${message.jobId} succeeded`, { ...fields, event: 'JOB_SUCCEEDED' });
        return;
      case 'QUEUED':
        this.logger.warn(`job ${message.jobId} failed (${code}), retry scheduled`, { ...fields, event: 'JOB_RETRY_SCHEDULED' });
        return;
      case 'FAILED':
        this.logger.error(`job ${message.jobId} failed (${code}) and was dead-lettered`, { ...fields, event: 'JOB_DEAD_LETTERED' });
        return;
      case 'CANCELLED':
        this.logger.info(`job ${message.jobId} cancelled`, { ...fields, event: 'JOB_CANCELLED' });
        return;
      case 'RELEASED':
        this.logger.info(`job ${message.jobId} handed back, no retry spent`, { ...fields, event: 'JOB_RELEASED' });
        return;
      case 'LEASE_LOST':
        this.logger.warn(`job ${message.jobId}: lease lost, the child let it go`, { ...fields, event: 'LEASE_LOST' });
        return;
    }
  }

  private async onExit(slot: number, child: ChildHandle, exit: ChildExit): Promise<void> {
    const how = describeExit(exit.code, exit.signal);
    const crashed = child.killed === undefined && exit.code !== 0;
    const state = child.startupError !== undefined ? 'failed' : 'exited';
    // With the database away, the child is replaced all the same: its leases run out and the sweeper takes its jobs back.
    await this.takeBackJobs(child, how)
      .then(() => this.deps.store.workerExit({ id: child.workerId, state, exitCode: exit.code, exitSignal: exit.signal }))
      .catch((error: unknown) => {
        if (dbFaultOf(error) === undefined) throw error;
        this.logger.warn(`could not record the exit of child ${child.pid} (the database is away): the sweeper takes its jobs back when their leases run out`, { pid: child.pid });
      });
    const fields = {
      event: 'CHILD_EXITED',
      pid: child.pid,
      exit_code: exit.code,
      exit_signal: exit.signal,
      reason: child.killed?.reason ?? (crashed ? 'crashed' : 'exited'),
    };
    this.logger.log(crashed ? 'warn' : 'info', `child exited: ${how}${child.killed ? ` (we killed it: ${child.killed.detail})` : ''}`, fields);

    if (!this.accepting) return;
    if (slot >= this.config.processes) return; // scaled away by a reload
    if (child.retiring === 'reload' && child.startupError === undefined) return this.spawn(slot);
    if (child.startupError !== undefined) {
      this.setDisabled(child.startupError);
      this.logger.error(`class ${this.config.name} disabled: ${child.startupError}; it consumes no jobs until the config is fixed`, {
        event: 'CLASS_DISABLED',
        pid: child.pid,
      });
      return;
    }
    let delayMs = RESTART_BASE_DELAY_MS;
    if (crashed) {
      const fruitless = child.jobsFinished === 0 ? (this.fruitlessCrashes[slot] ?? 0) + 1 : 1;
      this.fruitlessCrashes[slot] = fruitless;
      const decision = this.restartPolicy.onCrash(Date.now(), fruitless);
      if (!decision.restart) {
        this.setDisabled(`crash loop: ${decision.recentCrashes} crashes within ${this.config.restart.within_seconds}s`);
        this.logger.error(
          `CRASH LOOP: class ${this.config.name} crashed ${decision.recentCrashes} times within ${this.config.restart.within_seconds}s (max_restarts ${this.config.restart.max_restarts}); not restarting it`,
          { event: 'CRASH_LOOP', pid: child.pid },
        );
        return;
      }
      delayMs = decision.delayMs;
    }
    this.restarts += 1;
    this.metrics.childRestarted(this.config.name);
    this.logger.info(`restarting child in ${delayMs} ms`, { event: 'CHILD_RESTART_SCHEDULED', pid: child.pid, delay_ms: delayMs });
    this.restartTimers.set(
      slot,
      setTimeout(() => this.spawn(slot), delayMs),
    );
  }

  /** Disabled for `reason` (no more children until a reload changes its config), or enabled again (undefined); recorded in the database. */
  private setDisabled(reason: string | undefined): void {
    this.disabled = reason;
    if (reason !== undefined) this.stopRestarting();
    recordDisabled(this.deps.store, { supervisorId: this.deps.supervisorId, class: this.config.name }, reason, this.logger);
  }

  /**
   * Guarantee 4's fast path: the child is gone, so its jobs come back now, not
   * when the lease runs out. When one job is to blame (the one killed for, or
   * the only one a one-slot child was running), it alone spends a retry, and
   * is failed as poison once it has taken down POISON_THRESHOLD children in a
   * row; the child's other jobs go back free, as its victims.
   */
  private async takeBackJobs(child: ChildHandle, how: string): Promise<void> {
    const { store, retryDelay } = this.deps;
    if (child.killed?.reason === 'shutdown' || child.killed?.reason === 'reload') {
      const released = await store.leasesReleaseByOwner({ ownerId: child.workerId, actor: this.deps.supervisorId, reason: child.killed.reason });
      for (const job of released) logRecovery(this.logger, job, 'LEASE:RELEASED');
      this.metrics.jobsRecovered(released, 'LEASE:RELEASED', 'child_exit');
      this.wakeFor(released);
      return;
    }
    const params: RecoverParams = {
      errorCode: child.killed?.code ?? 'WORKER:CRASHED',
      errorDetail: child.killed ? `${child.killed.detail}; child ${how}` : `child ${how}`,
      event: child.killed === undefined ? 'RECOVERED' : child.killed.reason === 'max_runtime' ? 'TIMED_OUT' : 'KILLED',
      actor: this.deps.supervisorId,
      retryDelay,
    };
    const culprit = child.killed !== undefined ? child.killed.culprit : child.soleSuspect();
    if (culprit !== undefined) {
      const deaths = (this.deaths.get(culprit.jobId) ?? 0) + 1;
      this.deaths.set(culprit.jobId, deaths);
      if (deaths >= POISON_THRESHOLD) {
        this.deaths.delete(culprit.jobId);
        Object.assign(params, {
          errorCode: 'WORKER:POISON',
          errorDetail: `took down its child ${deaths} times in a row (last: ${params.errorCode}, ${params.errorDetail})`,
          retryable: false,
        });
      }
    }
    const culpritCost = culprit?.usage.cost();
    const recovered = await store.leasesRecoverByOwner({ ...params, ownerId: child.workerId, culpritJobId: culprit?.jobId, culpritCost });
    if (culpritCost !== undefined) this.metrics.jobCost(this.config.name, culpritCost);
    const logger = this.logger.child({ pid: child.pid });
    for (const job of recovered) logRecovery(logger, job, params.errorCode, culprit?.jobId);
    this.metrics.jobsRecovered(recovered, params.errorCode, 'child_exit');
    this.wakeFor(recovered);
  }
}
