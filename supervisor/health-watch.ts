import pidusage from 'pidusage';
import type { Logger } from '../src/log.js';
import { unlessDbFault, type DbFaultKind, type DbOutage } from '../src/store/faults.js';
import type { SupervisorStore } from '../src/store/types.js';
import type { RunningJob, WatchedChild } from './supervised-child.js';

/** A child that has not answered a ping for this many heartbeat intervals is blocked. */
export const STALE_HEARTBEATS = 3;
/** Worker rows (CPU, memory, current job) are refreshed every this many ticks. */
const REGISTRY_EVERY_TICKS = 4;
/**
 * Outages that silence healthy children: a full or failing disk stalls each
 * process's reads for seconds, and a child stuck in a read answers no ping. Not a
 * lock-out or a lost connection: those waits leave the event loop free.
 */
const STALLING_FAULTS: ReadonlySet<DbFaultKind> = new Set(['disk_full', 'io']);
const stalls = (outage: DbOutage | undefined) => outage !== undefined && STALLING_FAULTS.has(outage.kind);

/** One sample per pid (pidusage's): CPU percent, resident bytes, CPU time in ms; undefined for a pid gone. */
export type UsageSampler = (
  pids: number[],
) => Promise<Record<number, { cpu: number; memory: number; ctime: number } | undefined>>;

/** The store calls the health watch makes: the leases a child holds, and its worker row; its time, which a job's start is on. */
export type WatchStore = Pick<SupervisorStore, 'jobListHeldBy' | 'workerHeartbeat' | 'clock'>;

export interface HealthWatchOptions {
  store: WatchStore;
  logger: Logger;
  /** The class pools, whose live children it watches. */
  pools: readonly { readonly children: readonly WatchedChild[] }[];
  tickMs: number;
  /** The supervisor's own database outage, if one is in progress. */
  outage: () => DbOutage | undefined;
  /** Reads the children's CPU and memory; pidusage by default. */
  sampleUsage?: UsageSampler;
}

/**
 * Watches every child by pid (memory and CPU through pidusage), over IPC
 * (a child that stops answering pings is blocked), and by lease data in the
 * database (a job it still runs though the lease is gone), and kills the
 * ones that break their class's limits. Whether a child is alive never
 * depends on the database: a database that is slow or away is no reason to
 * kill healthy children (its outage is logged once, by the store's watch).
 */
export class HealthWatch {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private ticks = 0;
  /** When the watch first saw a job no longer held by its child, while the child still says it runs it. */
  private readonly missingSince = new WeakMap<RunningJob, number>();

  constructor(private readonly options: HealthWatchOptions) {}

  start(): void {
    if (this.timer !== undefined) return;
    let lastBeat = Date.now();
    this.timer = setInterval(() => {
      // Our own turn came late: this process (or the whole machine) was stalled.
      const late = Date.now() - lastBeat > 2 * this.options.tickMs;
      lastBeat = Date.now();
      // Liveness apart from the tick, which a slow database may hold up; and after this turn's I/O
      // (setImmediate), so that answers that came while our own loop was busy are read before we judge.
      setImmediate(() => {
        for (const pool of this.options.pools) for (const child of pool.children) this.checkAnswers(child, late);
      });
      this.inFlight ??= this.tick()
        .catch((error: unknown) => void this.options.logger.error('health check failed', { err: error }))
        .finally(() => (this.inFlight = undefined));
    }, this.options.tickMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.inFlight;
    pidusage.clear();
  }

  private async tick(): Promise<void> {
    this.ticks += 1;
    const children = this.options.pools.flatMap((pool) => pool.children);
    if (children.length === 0) return;
    const usage = await (this.options.sampleUsage ?? sampleUsage)(children.map((child) => child.pid));
    const refreshRegistry = this.ticks % REGISTRY_EVERY_TICKS === 0;
    for (const child of children) {
      const sample = usage[child.pid];
      if (sample !== undefined) {
        // Recorded first: the sample that kills a child for memory is part of its culprit's cost.
        child.recordUsage({ ctimeMs: sample.ctime, rssBytes: sample.memory });
        this.checkMemory(child, sample.memory);
      }
      await this.checkLeases(child).catch(
        unlessDbFault((error) => this.options.logger.error('health check failed', { err: error, pid: child.pid })),
      );
      if (refreshRegistry && child.alive) {
        await this.options.store
          .workerHeartbeat({
            id: child.workerId,
            state: child.state === 'exited' ? undefined : child.state,
            cpuPercent: sample?.cpu ?? null,
            memoryBytes: sample?.memory ?? null,
            jobId: child.job?.jobId ?? null,
          })
          .catch(
            unlessDbFault((error) =>
              this.options.logger.warn('could not record a child in workers', { err: error, pid: child.pid }),
            ),
          );
      }
    }
  }

  private checkMemory(child: WatchedChild, rssBytes: number): void {
    const capBytes = child.config.max_memory_mb * 1024 * 1024;
    if (rssBytes <= capBytes || child.killed !== undefined) return;
    const detail = `resident memory ${Math.round(rssBytes / 1048576)} MB over max_memory_mb ${child.config.max_memory_mb}`;
    this.kill(child, 'memory', 'RESOURCE:MEMORY', detail);
  }

  /**
   * Ping every running child; one that has left a ping unanswered for
   * STALE_HEARTBEATS heartbeat intervals has a blocked event loop (a busy
   * loop, a synchronous wait). Silence does not count while our own turn
   * came late (`late`: this process or the machine was stalled), nor during
   * an outage that stalls writers (`STALLING_FAULTS`), ours or the child's.
   */
  private checkAnswers(child: WatchedChild, late: boolean): void {
    if (child.killed !== undefined || !child.alive) return;
    if (late || stalls(child.dbOutage) || stalls(this.options.outage())) return child.forgiveSilence();
    if (child.state !== 'ready' && child.state !== 'busy') return;
    const { config } = child;
    const silentMs = child.unansweredForMs();
    if (silentMs > STALE_HEARTBEATS * config.heartbeat_seconds * 1000) {
      const overRuntime = [...child.started.values()].some(
        (job) => this.options.store.clock.now() - job.startedAt > config.max_runtime_seconds * 1000,
      );
      const detail = `answered no ping for ${(silentMs / 1000).toFixed(1)}s (heartbeat_seconds ${config.heartbeat_seconds}): the child is blocked`;
      return this.kill(child, 'unresponsive', overRuntime ? 'TIMEOUT:MAX_RUNTIME' : 'WORKER:UNRESPONSIVE', detail);
    }
    child.ping();
  }

  /**
   * Hold the child's leases in the database against what it told us it runs:
   * a job past its runtime and the grace (the child aborts the signal itself
   * at max_runtime, so it has not let go), or a job it still runs though the
   * lease is gone. A child that lost a lease learns it on its next heartbeat,
   * or gives it up at its own deadline; one that has not for a lease and
   * three heartbeats more is blocked. (Fencing keeps it harmless meanwhile;
   * this only reclaims the process.) Both need the lease data: a job whose
   * handler ended but whose outcome waits for the database is not running.
   */
  private async checkLeases(child: WatchedChild): Promise<void> {
    if (child.killed !== undefined || !child.alive || child.started.size === 0) return;
    const { config } = child;
    const held = new Set((await this.options.store.jobListHeldBy({ ownerId: child.workerId })).map((job) => job.id));
    const now = this.options.store.clock.now();
    for (const job of child.started.values()) {
      const runtimeMs = now - job.startedAt;
      if (held.has(job.jobId) && runtimeMs > (config.max_runtime_seconds + config.kill_grace_seconds) * 1000) {
        const detail = `job ${job.jobId} ran ${(runtimeMs / 1000).toFixed(1)}s, past max_runtime_seconds ${config.max_runtime_seconds} and its grace`;
        return this.kill(child, 'max_runtime', 'TIMEOUT:MAX_RUNTIME', detail, job);
      }
      if (held.has(job.jobId)) {
        this.missingSince.delete(job);
        continue;
      }
      const missingSince = this.missingSince.get(job) ?? now;
      this.missingSince.set(job, missingSince);
      if (now - missingSince > (config.lease_seconds + STALE_HEARTBEATS * config.heartbeat_seconds) * 1000) {
        const detail = `still runs job ${job.jobId} ${((now - missingSince) / 1000).toFixed(1)}s after losing its lease: the child is blocked`;
        return this.kill(child, 'unresponsive', 'WORKER:UNRESPONSIVE', detail);
      }
    }
  }

  /** Kill a child for `culprit` (the job over its runtime); without one, the child blames whom it can. */
  private kill(
    child: WatchedChild,
    reason: 'memory' | 'max_runtime' | 'unresponsive',
    code: string,
    detail: string,
    culprit?: RunningJob,
  ): void {
    // A blocked or stopped child cannot run a SIGTERM handler: a grace would only keep its locks and leases hostage.
    const graceMs = reason === 'unresponsive' ? 0 : child.config.kill_grace_seconds * 1000;
    child.kill(reason, code, detail, graceMs, culprit);
    this.options.logger.warn(`killing child: ${detail}`, {
      event: 'CHILD_KILLED',
      class: child.config.name,
      pid: child.pid,
      job_id: child.killed?.culprit?.jobId,
      reason,
      code,
    });
  }
}

const sampleUsage: UsageSampler = async (pids) => {
  try {
    return await pidusage(pids);
  } catch {
    // One pid vanished between listing and sampling: sample the rest one by one.
    const entries = await Promise.all(
      pids.map(async (pid) => [pid, await pidusage(pid).catch(() => undefined)] as const),
    );
    return Object.fromEntries(entries);
  }
};
