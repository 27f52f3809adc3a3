/**
 * HealthWatch's rules with fake children and fake timers: a child that
 * leaves a ping unanswered for STALE_HEARTBEATS heartbeats has a blocked
 * event loop and is killed (for its runtime if a job is past it); silence
 * is forgiven while the watch's own turn comes late or while an outage
 * stalls writers; a child over max_memory_mb is killed; a child still
 * running a job whose lease is gone is killed once the lease and three
 * heartbeats have passed.
 */
import { systemClock } from '../../src/clock.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DbOutage } from '../../src/store/faults.js';
import type { JobRow } from '../../src/store/types.js';
import { HealthWatch, STALE_HEARTBEATS, type WatchStore } from '../../supervisor/health-watch.js';
import { JobUsage } from '../../supervisor/job-usage.js';
import type { ChildKill, ChildState, KillReason, RunningJob, WatchedChild } from '../../supervisor/supervised-child.js';
import { classConfig } from './support/class-config.js';
import { memoryLogger } from './support/memory-logger.js';
import { until } from './support/until.js';

const TICK_MS = 250;
const config = classConfig({ lease_seconds: 3, heartbeat_seconds: 1, max_runtime_seconds: 60, max_memory_mb: 100 });
const STALE_MS = STALE_HEARTBEATS * config.heartbeat_seconds * 1000;

/** A child that answers pings while `answers` is true, runs the jobs in `started`, and records the kill. */
class FakeWatchedChild implements WatchedChild {
  readonly pid = 20_000;
  readonly workerId = 'sup/unit.0.1';
  readonly config = config;
  state: ChildState = 'ready';
  readonly alive = true;
  readonly started = new Map<number, RunningJob>();
  killed: ChildKill | undefined;
  dbOutage: DbOutage | undefined;
  answers = true;
  rssBytes = 10 * 1024 * 1024;
  private unansweredSince: number | undefined;

  get job(): RunningJob | undefined {
    return [...this.started.values()].at(-1);
  }

  run(jobId: number, startedAt = Date.now()): void {
    this.started.set(jobId, {
      jobId,
      attempt: 1,
      leaseToken: `token-${jobId}`,
      startedAt,
      usage: new JobUsage(undefined),
    });
    this.state = 'busy';
  }

  ping(): void {
    this.unansweredSince ??= Date.now();
    if (this.answers) this.unansweredSince = undefined;
  }

  forgiveSilence(): void {
    if (this.unansweredSince !== undefined) this.unansweredSince = Date.now();
  }

  unansweredForMs(): number {
    return this.unansweredSince === undefined ? 0 : Date.now() - this.unansweredSince;
  }

  recordUsage(): void {}

  /** The grace the watch gave the kill: SIGTERM, then SIGKILL that much later (0: SIGKILL at once). */
  killGraceMs: number | undefined;

  kill(reason: KillReason, code: string, detail: string, graceMs: number): void {
    this.killed ??= { reason, code, detail, culprit: undefined };
    this.killGraceMs ??= graceMs;
    this.state = 'stopping';
  }
}

function setup() {
  const child = new FakeWatchedChild();
  const held = new Set<number>();
  const store: WatchStore = {
    jobListHeldBy: async () => [...held].map((id) => ({ id }) as JobRow),
    workerHeartbeat: async () => undefined,
    clock: systemClock,
  };
  let outage: DbOutage | undefined;
  const watch = new HealthWatch({
    store,
    logger: memoryLogger().logger,
    pools: [{ children: [child] }],
    tickMs: TICK_MS,
    outage: () => outage,
    sampleUsage: async (pids) =>
      Object.fromEntries(pids.map((pid) => [pid, { cpu: 0, memory: child.rssBytes, ctime: 0 }])),
  });
  return { child, held, watch, setOutage: (next: DbOutage | undefined) => (outage = next) };
}

describe('HealthWatch', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('kills a child whose event loop is blocked: a ping unanswered for STALE_HEARTBEATS heartbeats', async () => {
    const { child, watch } = setup();
    watch.start();
    await vi.advanceTimersByTimeAsync(10 * STALE_MS);
    expect(child.killed).toBeUndefined();

    child.answers = false;
    const silentFrom = Date.now();
    await until('the child killed', () => child.killed !== undefined, 2 * STALE_MS);
    expect(Date.now() - silentFrom).toBeGreaterThan(STALE_MS);
    expect(child.killed).toMatchObject({ reason: 'unresponsive', code: 'WORKER:UNRESPONSIVE' });
    // It cannot run a SIGTERM handler: no grace.
    expect(child.killGraceMs).toBe(0);
    await watch.stop();
  });

  it('blames the runtime when the blocked child runs a job past max_runtime_seconds', async () => {
    const { child, watch, held } = setup();
    held.add(1);
    child.run(1, Date.now() - config.max_runtime_seconds * 1000);
    child.answers = false;
    watch.start();
    await until('the child killed', () => child.killed !== undefined, 2 * STALE_MS);
    expect(child.killed).toMatchObject({ reason: 'unresponsive', code: 'TIMEOUT:MAX_RUNTIME' });
    await watch.stop();
  });

  it('forgives the silence while its own turn comes late (this process was stalled)', async () => {
    const { child, watch } = setup();
    child.answers = false;
    watch.start();
    // Just past a tick, whose check runs in the next turn (setImmediate).
    await vi.advanceTimersByTimeAsync(STALE_MS - TICK_MS + 1);
    // Our own loop stalls: the next tick comes long after it was due, and must not blame the child.
    vi.setSystemTime(Date.now() + 2 * STALE_MS);
    await vi.advanceTimersByTimeAsync(TICK_MS);
    expect(child.killed).toBeUndefined();
    // The wait starts again at the late tick: a whole STALE_MS more before the kill.
    await vi.advanceTimersByTimeAsync(STALE_MS - TICK_MS);
    expect(child.killed).toBeUndefined();
    await until('the child killed', () => child.killed !== undefined, 3 * TICK_MS);
    await watch.stop();
  });

  it('forgives the silence while an outage stalls writers (a full disk), not while the database is merely away', async () => {
    const stalled = setup();
    stalled.child.answers = false;
    stalled.child.dbOutage = { kind: 'disk_full', since: Date.now(), reason: 'SQLITE_FULL' };
    stalled.watch.start();
    await vi.advanceTimersByTimeAsync(4 * STALE_MS);
    expect(stalled.child.killed).toBeUndefined();
    await stalled.watch.stop();

    const away = setup();
    away.child.answers = false;
    away.setOutage({ kind: 'connection', since: Date.now(), reason: 'ECONNREFUSED' });
    away.watch.start();
    await until('the child killed', () => away.child.killed !== undefined, 2 * STALE_MS);
    await away.watch.stop();
  });

  it('kills a child over max_memory_mb', async () => {
    const { child, watch } = setup();
    watch.start();
    await vi.advanceTimersByTimeAsync(4 * TICK_MS);
    expect(child.killed).toBeUndefined();
    child.rssBytes = (config.max_memory_mb + 1) * 1024 * 1024;
    await until('the child killed', () => child.killed !== undefined, 2 * TICK_MS);
    expect(child.killed).toMatchObject({ reason: 'memory', code: 'RESOURCE:MEMORY' });
    // A child that runs may still hand its jobs back on SIGTERM.
    expect(child.killGraceMs).toBe(config.kill_grace_seconds * 1000);
    await watch.stop();
  });

  it('kills a child that still runs a job a lease and three heartbeats after losing its lease', async () => {
    const { child, watch, held } = setup();
    child.run(1);
    held.add(1);
    watch.start();
    await vi.advanceTimersByTimeAsync(4 * TICK_MS);
    held.delete(1);
    const lostAt = Date.now();
    await until('the child killed', () => child.killed !== undefined, 30_000);
    expect(Date.now() - lostAt).toBeGreaterThan(
      (config.lease_seconds + STALE_HEARTBEATS * config.heartbeat_seconds) * 1000,
    );
    expect(child.killed).toMatchObject({ reason: 'unresponsive', code: 'WORKER:UNRESPONSIVE' });
    expect(child.killed?.detail).toContain('after losing its lease');
    await watch.stop();
  });
});
