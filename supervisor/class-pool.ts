import type { ClassConfig } from '../src/config/schema.js';
import type { Logger } from '../src/log.js';
import { NO_METRICS, type MetricsSink } from './metrics-sink.js';
import type { RecoveredJob, RetryDelay, SupervisorStore } from '../src/store/types.js';
import { unlessDbFault } from '../src/store/faults.js';
import { hearChild, recordChildEnd, type Hearing } from './child-hearing.js';
import { decideRestart, NO_RESTARTS_YET, type ExitFacts } from './restart-policy.js';
import { retireChildren, type RetireOptions } from './retire.js';
import { sameChildStart } from './child-start.js';
import { recordDisabled, type DisabledStore } from './disabled-record.js';
import type { ChildExit, PoolChild, StartChild } from './supervised-child.js';
import { JobTakeBack, type TakeBackStore } from './take-back.js';
import { WakeTimers } from './wake-timers.js';

/** A reload's replacement must be ready within this, or the reload fails (say it waits for a database that is away). */
const READY_TIMEOUT_MS = 30_000;

/** The store calls a pool makes: the worker registry, the take-back of a dead child's jobs, the disabled record; its time, which a run_at is on. */
export type PoolStore = Pick<SupervisorStore, 'workerRegister' | 'workerHeartbeat' | 'workerExit' | 'clock'> &
  TakeBackStore &
  DisabledStore;

export interface PoolDeps<C extends PoolChild> {
  store: PoolStore;
  /** Forks a child (ChildHandle); a test passes a fake. */
  startChild: StartChild<C>;
  logger: Logger;
  /** What every child is handed with its class config: the database, the result cap. */
  database: string;
  statementTimeoutMs: number;
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
export class ClassPool<C extends PoolChild> {
  private readonly slots: (C | undefined)[];
  /** Per slot: the child a reload started beside the slot's own, until it is ready to take the slot over. */
  private readonly replacements = new Map<number, C>();
  /** The class's crashes within its restart window (RestartHistory.crashes); a reload's new config starts afresh. */
  private crashes: readonly number[] = NO_RESTARTS_YET.crashes;
  /** Per slot: the restart waiting out its delay. */
  private readonly restartTimers = new Map<number, NodeJS.Timeout>();
  private readonly wakeTimers = new WakeTimers();
  private readonly exitHandling = new Set<Promise<void>>();
  /** Children leaving after a reload, and the rolling replacement of stale ones. */
  private readonly reloading = new Set<Promise<void>>();
  /** Per slot: crashes in a row of children that finished no job (the restart delay doubles with each). */
  private readonly fruitlessCrashes: number[];
  private readonly takeBack: JobTakeBack;
  /** What a child's messages and its end reach (child-hearing.ts). */
  private readonly hearing: Hearing;
  private readonly logger: Logger;
  private readonly metrics: MetricsSink;
  private generation = 0;
  private restarts = 0;
  private accepting = true;
  disabled: string | undefined;

  constructor(
    public config: ClassConfig,
    private readonly deps: PoolDeps<C>,
  ) {
    this.slots = Array.from({ length: config.processes }, () => undefined);
    this.fruitlessCrashes = this.slots.map(() => NO_RESTARTS_YET.fruitless);
    this.logger = deps.logger.child({ class: config.name });
    this.metrics = deps.metrics ?? NO_METRICS;
    const { store, supervisorId, retryDelay } = deps;
    this.takeBack = new JobTakeBack({
      store,
      logger: this.logger,
      metrics: this.metrics,
      supervisorId,
      retryDelay,
      wakeFor: (jobs) => this.wakeFor(jobs),
    });
    const { logger, metrics, takeBack } = this;
    this.hearing = { logger, metrics, store, takeBack, className: config.name };
  }

  start(): void {
    for (let slot = 0; slot < this.slots.length; slot++) this.spawn(slot);
  }

  /** Every live child, replacements still starting included (the health watch and a shutdown must reach those too). */
  get children(): C[] {
    return [...this.slots, ...this.replacements.values()].filter(
      (child): child is C => child !== undefined && child.alive,
    );
  }

  /**
   * A reload's new config for this class (same name). Scaling drains the
   * last slots or fills new ones; any other change reaches the children by
   * replacing them, one at a time, since each keeps the config it was
   * started with (a class disabled by its config is tried again). Resolves
   * once the children run the new config, or with why they cannot: then the
   * class is back on the config its children still run.
   */
  reconfigure(
    next: ClassConfig,
    resultLimitBytes: number,
    retire: Omit<RetireOptions, 'logger' | 'reason'>,
  ): Promise<string | undefined> {
    const previous = { config: this.config, resultLimitBytes: this.deps.resultLimitBytes };
    this.apply(next, resultLimitBytes);
    if (
      this.disabled !== undefined &&
      !sameChildStart(previous.config, previous.resultLimitBytes, next, resultLimitBytes)
    ) {
      this.logger.info(`class ${next.name} enabled again: its config changed`, {
        event: 'CLASS_ENABLED',
        was: this.disabled,
      });
      this.setDisabled(undefined);
      this.accepting = true;
    }
    const leaving = this.slots
      .slice(next.processes)
      .filter((child): child is C => child?.alive === true && child.retiring === undefined);
    for (const slot of this.restartTimers.keys()) if (slot >= next.processes) this.cancelRestart(slot);
    if (leaving.length > 0) {
      this.logger.info(`scaling ${next.name} down to ${next.processes}: draining ${leaving.length} children`, {
        event: 'CHILD_DRAINING',
        pids: leaving.map((c) => c.pid),
      });
      this.track(retireChildren(leaving, { ...retire, logger: this.logger, reason: 'reload' }));
    }
    const rollout = this.rollOut(retire, previous);
    this.track(rollout.then(() => undefined));
    return rollout;
  }

  private apply(config: ClassConfig, resultLimitBytes: number): void {
    this.config = config;
    this.deps.resultLimitBytes = resultLimitBytes;
    this.crashes = NO_RESTARTS_YET.crashes;
  }

  /** The class left the config: drain and stop every child, and restart none. */
  retire(retire: Omit<RetireOptions, 'logger' | 'reason'>): Promise<void> {
    this.stopRestarting();
    if (this.disabled !== undefined) this.setDisabled(undefined);
    this.logger.info(`class ${this.config.name} left the config: draining its ${this.children.length} children`, {
      event: 'CHILD_DRAINING',
      pids: this.children.map((c) => c.pid),
    });
    this.track(retireChildren(this.children, { ...retire, logger: this.logger, reason: 'reload' }));
    return this.settled();
  }

  /**
   * Replace the stale children, then fill the empty slots. A replacement
   * that cannot start stops it at once: the class goes back to `previous`
   * (the config its untouched children run), and a child already replaced is
   * replaced back. Resolves with why the new config could not start.
   */
  private async rollOut(
    retire: Omit<RetireOptions, 'logger' | 'reason'>,
    previous: { config: ClassConfig; resultLimitBytes: number },
  ): Promise<string | undefined> {
    const failure = await this.replaceStale(retire);
    if (!this.accepting) return undefined;
    if (failure !== undefined) {
      this.apply(previous.config, previous.resultLimitBytes);
      await this.replaceStale(retire);
    }
    for (let slot = 0; slot < this.config.processes; slot++)
      if (this.slots[slot]?.alive !== true && !this.restartTimers.has(slot)) this.spawn(slot);
    return failure;
  }

  /**
   * One at a time, each stale child (by default: started with another config than the one in force) gets a
   * replacement beside it, and leaves only once that one is ready (Gunicorn's and PM2's order): a replacement
   * that cannot start leaves the old children serving. Resolves with why one could not.
   */
  private async replaceStale(
    retire: Omit<RetireOptions, 'logger' | 'reason'>,
    stale = (child: C) => this.isStale(child),
    why = 'its class config changed',
  ): Promise<string | undefined> {
    for (;;) {
      const slot = this.slots.findIndex(
        (child, index) =>
          index < this.config.processes && child?.alive === true && child.retiring === undefined && stale(child),
      );
      const old = this.slots[slot];
      if (!this.accepting || old === undefined) return undefined;
      this.logger.info(`replacing child ${old.workerId}: ${why}`, {
        event: 'CHILD_REPLACED',
        pid: old.pid,
        worker_id: old.workerId,
        slot,
      });
      const replacement = this.startChild(slot);
      this.replacements.set(slot, replacement);
      const failure = await replacement.untilReady(READY_TIMEOUT_MS);
      this.replacements.delete(slot);
      if (failure !== undefined) return failure;
      this.slots[slot] = replacement;
      await retireChildren([old], { ...retire, logger: this.logger, reason: 'reload' });
    }
  }

  /** Replace every child of now, one at a time, as a reload does: its modules changed on disk (`--watch`). */
  replaceChildren(retire: Omit<RetireOptions, 'logger' | 'reason'>): Promise<string | undefined> {
    const before = new Set(this.children);
    const stale = (child: C) => before.has(child) || this.isStale(child);
    const replaced = this.replaceStale(retire, stale, 'its modules changed');
    this.track(replaced.then(() => undefined));
    return replaced;
  }

  private isStale(child: C): boolean {
    return !sameChildStart(child.config, child.resultLimitBytes, this.config, this.deps.resultLimitBytes);
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
    for (const timer of this.restartTimers.values()) clearTimeout(timer);
    this.restartTimers.clear();
    this.wakeTimers.clear();
  }

  /** Jobs of this class came back to the queue: its idle children are woken when each is due (WakeTimers). */
  wakeFor(jobs: readonly RecoveredJob[]): void {
    this.wakeTimers.wakeFor(jobs, this.deps.store.clock.now(), () => {
      for (const child of this.children) child.send({ type: 'wake' });
    });
  }

  /** The log level changed: the children send each success in full only while it is logged (debug). */
  logLevelChanged(): void {
    for (const child of this.children) child.send({ type: 'success-lines', on: this.successLines() });
  }

  private successLines(): boolean {
    return this.logger.isLevelEnabled('debug');
  }

  /** Wait for the exit handling in flight (recoveries, registry writes) and the reload steps. */
  async settled(): Promise<void> {
    while (this.exitHandling.size + this.reloading.size > 0)
      await Promise.all([...this.exitHandling, ...this.reloading]);
  }

  private spawn(slot: number): void {
    if (
      !this.accepting ||
      this.disabled !== undefined ||
      this.slots[slot]?.alive === true ||
      this.replacements.has(slot)
    )
      return;
    this.cancelRestart(slot);
    this.slots[slot] = this.startChild(slot);
  }

  /** Fork a child for `slot` with the config in force, and register it; the caller puts it in its slot. */
  private startChild(slot: number): C {
    this.generation += 1;
    const workerId = `${this.deps.supervisorId}/${this.config.name}.${slot}.${this.generation}`;
    const start = {
      type: 'start' as const,
      workerId,
      database: this.deps.database,
      statementTimeoutMs: this.deps.statementTimeoutMs,
      resultLimitBytes: this.deps.resultLimitBytes,
      config: this.config,
      successLines: this.successLines(),
    };
    const child = this.deps.startChild(start, {
      message: (from, message) => hearChild(from, message, this.hearing),
      output: (from, stream, line) => {
        const level = stream === 'stderr' ? 'warn' : 'info';
        this.logger.log(level, line, { event: 'CHILD_OUTPUT', pid: from.pid, stream, line });
      },
      exit: (from, exit) => {
        const handling = this.onExit(slot, from, exit)
          .catch(
            (error: unknown) => void this.logger.error('handling a child exit failed', { err: error, pid: from.pid }),
          )
          .finally(() => this.exitHandling.delete(handling));
        this.exitHandling.add(handling);
      },
    });
    this.logger.info(`spawned child ${workerId}`, {
      event: 'CHILD_SPAWNED',
      pid: child.pid,
      worker_id: workerId,
      slot,
    });
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
    return child;
  }

  private async onExit(slot: number, child: C, exit: ChildExit): Promise<void> {
    const killed = child.killed !== undefined;
    await recordChildEnd(child, exit, this.hearing);

    const facts: ExitFacts = {
      ...exit,
      // Shutting down, scaled away by a reload, or a replacement that never took its slot (or the child one
      // took it from).
      askedToStop: !this.accepting || slot >= this.config.processes || this.slots[slot] !== child,
      killed,
      // A start that may succeed on another try falls to the crash rules: backoff, and the crash loop's give-up.
      startupError: child.startupRestartable ? undefined : child.startupError,
      jobsFinished: child.jobsFinished,
    };
    const history = { crashes: this.crashes, fruitless: this.fruitlessCrashes[slot] ?? 0 };
    const decision = decideRestart(facts, this.config.restart, history, Date.now());
    this.crashes = decision.history.crashes;
    this.fruitlessCrashes[slot] = decision.history.fruitless;
    switch (decision.action) {
      case 'none':
        return;
      case 'give-up':
        // A crash loop of failed starts (a setup that keeps failing) is recorded with why the last one failed.
        this.setDisabled(
          decision.cause === 'crash-loop' && child.startupError !== undefined
            ? `${decision.reason}; the last could not start: ${child.startupError}`
            : decision.reason,
        );
        if (decision.cause === 'startup-failed')
          this.logger.error(
            `class ${this.config.name} disabled: ${decision.reason}; it consumes no jobs until the config is fixed`,
            { event: 'CLASS_DISABLED', pid: child.pid },
          );
        else
          this.logger.error(
            `CRASH LOOP: class ${this.config.name} crashed ${decision.recentCrashes} times within ${this.config.restart.within_seconds}s (max_restarts ${this.config.restart.max_restarts}); not restarting it`,
            { event: 'CRASH_LOOP', pid: child.pid },
          );
        return;
      case 'restart':
        this.scheduleRestart(slot, child, decision.delayMs);
    }
  }

  /** Start a child in `slot` after `delayMs`. */
  private scheduleRestart(slot: number, child: C, delayMs: number): void {
    this.restarts += 1;
    this.metrics.childRestarted(this.config.name);
    this.logger.info(`restarting child in ${delayMs} ms`, {
      event: 'CHILD_RESTART_SCHEDULED',
      pid: child.pid,
      delay_ms: delayMs,
    });
    this.restartTimers.set(
      slot,
      setTimeout(() => this.spawn(slot), delayMs),
    );
  }

  /** Disabled for `reason` (no more children until a reload changes its config), or enabled again (undefined); recorded in the database. */
  private setDisabled(reason: string | undefined): void {
    this.disabled = reason;
    if (reason !== undefined) this.stopRestarting();
    recordDisabled(
      this.deps.store,
      { supervisorId: this.deps.supervisorId, class: this.config.name },
      reason,
      this.logger,
    );
  }
}
