import pidusage from 'pidusage';
import type { Logger } from '../src/log.js';
import type { SupervisorStore } from '../src/store/types.js';
import type { ChildHandle, RunningJob } from './child-process.js';
import type { ClassPool } from './class-pool.js';

/** A held job whose heartbeat is older than this many heartbeat intervals means a blocked child. */
export const STALE_HEARTBEATS = 3;
/** Worker rows (CPU, memory, current job) are refreshed every this many ticks. */
const REGISTRY_EVERY_TICKS = 4;

export interface HealthWatchOptions {
  store: SupervisorStore;
  logger: Logger;
  pools: readonly ClassPool[];
  tickMs: number;
}

/**
 * Watches every child by pid (memory and CPU through pidusage) and by lease
 * data in the database (runtime and heartbeat age of the jobs it holds), and
 * kills the ones that break their class's limits.
 */
export class HealthWatch {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private ticks = 0;

  constructor(private readonly options: HealthWatchOptions) {}

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
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
    const usage = await sampleUsage(children.map((child) => child.pid));
    const refreshRegistry = this.ticks % REGISTRY_EVERY_TICKS === 0;
    for (const child of children) {
      const sample = usage[child.pid];
      if (sample !== undefined) this.checkMemory(child, sample.memory);
      await this.checkLeases(child);
      if (refreshRegistry && child.alive) {
        await this.options.store.workerHeartbeat({
          id: child.workerId,
          state: child.state === 'exited' ? undefined : child.state,
          cpuPercent: sample?.cpu ?? null,
          memoryBytes: sample?.memory ?? null,
          jobId: child.job?.jobId ?? null,
        });
      }
    }
  }

  private checkMemory(child: ChildHandle, rssBytes: number): void {
    const capBytes = child.config.max_memory_mb * 1024 * 1024;
    if (rssBytes <= capBytes || child.killed !== undefined) return;
    const detail = `resident memory ${Math.round(rssBytes / 1048576)} MB over max_memory_mb ${child.config.max_memory_mb}`;
    this.kill(child, 'memory', 'RESOURCE:MEMORY', detail);
  }

  /**
   * Read the child's leases from the database and hold them against what it
   * told us it runs: a job past its runtime, leases whose heartbeat stopped
   * (a blocked event loop), or a job it still runs though the lease is gone
   * (a child that was paused, and has not noticed).
   */
  private async checkLeases(child: ChildHandle): Promise<void> {
    if (child.killed !== undefined || !child.alive) return;
    const { config } = child;
    const now = Date.now();
    const held = await this.options.store.jobListHeldBy({ ownerId: child.workerId });
    const heldIds = new Set(held.map((job) => job.id));
    const maxRuntimeMs = config.max_runtime_seconds * 1000;
    let overRuntime = false;
    for (const job of child.started.values()) {
      const runtimeMs = now - job.startedAt;
      overRuntime ||= runtimeMs > maxRuntimeMs;
      // The child aborts the signal itself at max_runtime; past the grace it has not let go.
      if (heldIds.has(job.jobId) && runtimeMs > maxRuntimeMs + config.kill_grace_seconds * 1000) {
        const detail = `job ${job.jobId} ran ${(runtimeMs / 1000).toFixed(1)}s, past max_runtime_seconds ${config.max_runtime_seconds} and its grace`;
        return this.kill(child, 'max_runtime', 'TIMEOUT:MAX_RUNTIME', detail, job);
      }
      if (heldIds.has(job.jobId)) {
        job.missingSince = undefined;
      } else if (now - (job.missingSince ??= now) > (config.lease_seconds + STALE_HEARTBEATS * config.heartbeat_seconds) * 1000) {
        // A child that lost a lease learns it on its next heartbeat; one that has not for a lease and three
        // heartbeats more is blocked. (Fencing keeps it harmless meanwhile; this only reclaims the process.)
        const detail = `still runs job ${job.jobId} ${((now - job.missingSince) / 1000).toFixed(1)}s after losing its lease: the child is blocked`;
        return this.kill(child, 'stale_heartbeat', 'WORKER:UNRESPONSIVE', detail);
      }
    }
    const silentMs = Math.max(0, ...held.map((job) => now - (job.heartbeat_at ?? job.claimed_at ?? now)));
    if (silentMs > STALE_HEARTBEATS * config.heartbeat_seconds * 1000) {
      const detail = `sent no heartbeat for ${(silentMs / 1000).toFixed(1)}s (heartbeat_seconds ${config.heartbeat_seconds}): the child is blocked`;
      this.kill(child, 'stale_heartbeat', overRuntime ? 'TIMEOUT:MAX_RUNTIME' : 'WORKER:UNRESPONSIVE', detail);
    }
  }

  /** Kill a child for `culprit` (the job over its runtime); without one, ChildHandle blames whom it can. */
  private kill(child: ChildHandle, reason: 'memory' | 'max_runtime' | 'stale_heartbeat', code: string, detail: string, culprit?: RunningJob): void {
    child.kill(reason, code, detail, child.config.kill_grace_seconds * 1000, culprit);
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

async function sampleUsage(pids: number[]): Promise<Record<number, { cpu: number; memory: number } | undefined>> {
  try {
    return await pidusage(pids);
  } catch {
    // One pid vanished between listing and sampling: sample the rest one by one.
    const entries = await Promise.all(pids.map(async (pid) => [pid, await pidusage(pid).catch(() => undefined)] as const));
    return Object.fromEntries(entries);
  }
}
