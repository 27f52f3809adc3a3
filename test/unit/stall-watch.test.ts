/**
 * StallWatch's rules with fake children and fake timers: a child that
 * answers pings but whose run loop stays in one waiting phase past
 * stallAfterMs, while its class has due jobs, is logged (CHILD_STALLED)
 * and killed; a loop that moves on, a busy one, a class with nothing due, a
 * silent child, one in a database outage, a watch whose own turn came late
 * and a supervisor that cannot read the queue judge nobody. The same net
 * on real processes: test/faults/postgres-half-open.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LoopRecord } from '../../src/ipc/flight-record.js';
import type { DbOutage } from '../../src/store/faults.js';
import { stallAfterMs, StallWatch, type StallWatchedChild } from '../../supervisor/stall-watch.js';
import type { ChildKill, ChildState, KillReason } from '../../supervisor/supervised-child.js';
import { classConfig } from './support/class-config.js';
import { memoryLogger } from './support/memory-logger.js';

const TICK_MS = 250;
const config = classConfig({ name: 'unit', lease_seconds: 2, heartbeat_seconds: 0.5, poll_seconds: 0.1 });
const STALL_MS = stallAfterMs(config);

class FakeChild implements StallWatchedChild {
  readonly pid = 20_000;
  readonly workerId = 'sup/unit.0.1';
  readonly config = config;
  state: ChildState = 'ready';
  alive = true;
  killed: ChildKill | undefined;
  dbOutage: DbOutage | undefined;
  runLoop: LoopRecord | undefined;
  silentSince: number | undefined;

  unansweredForMs(): number {
    return this.silentSince === undefined ? 0 : Date.now() - this.silentSince;
  }

  forceKill(reason: KillReason, code: string, detail: string): void {
    this.killed ??= { reason, code, detail, culprit: undefined };
  }
}

function setup() {
  const child = new FakeChild();
  const { logger, records } = memoryLogger();
  const due = new Map<string, number>([['unit', Date.now()]]);
  let reads = 0;
  let readFails: Error | undefined;
  const watch = new StallWatch({
    store: {
      clock: { now: () => Date.now() },
      statsOldestDue: async () => {
        reads++;
        if (readFails !== undefined) throw readFails;
        return [...due].map(([name, runAt]) => ({ class: name, run_at: runAt }));
      },
    },
    logger,
    pools: [{ children: [child] }],
    tickMs: TICK_MS,
  });
  const stalledLines = () => records.filter((record) => record.event === 'CHILD_STALLED');
  return { child, due, watch, stalledLines, reads: () => reads, failReads: (error: Error) => (readFails = error) };
}

describe('StallWatch', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('kills a child that answers pings but has waited in one claim past stallAfterMs while its class has due jobs', async () => {
    const { child, watch, stalledLines } = setup();
    const lastClaimAt = Date.now() - 100;
    child.runLoop = { phase: 'claiming', since: Date.now(), lastClaimAt };
    watch.start();
    await vi.advanceTimersByTimeAsync(STALL_MS - TICK_MS);
    expect(child.killed).toBeUndefined();
    await vi.advanceTimersByTimeAsync(3 * TICK_MS);
    expect(child.killed).toMatchObject({ reason: 'stalled', code: 'LEASE:RELEASED' });
    expect(stalledLines()).toHaveLength(1);
    expect(stalledLines()[0]).toMatchObject({
      level: 'warn',
      class: 'unit',
      pid: child.pid,
      worker_id: child.workerId,
      waiting_on: 'claiming',
      last_claim_at: lastClaimAt,
    });
    await watch.stop();
  });

  it('judges nobody while the loop moves on, is busy, or its class has nothing due; reads the queue only for a suspect', async () => {
    const { child, due, watch, reads, stalledLines } = setup();
    watch.start();
    // An idle loop claims every poll interval: each claim is a new phase.
    for (let cycle = 0; cycle < 40; cycle++) {
      child.runLoop = { phase: cycle % 2 === 0 ? 'claiming' : 'idle', since: Date.now(), lastClaimAt: Date.now() };
      await vi.advanceTimersByTimeAsync(config.poll_seconds * 1000);
    }
    // Every slot busy with a long job: no claim is due.
    child.runLoop = { phase: 'busy', since: Date.now(), lastClaimAt: Date.now() };
    await vi.advanceTimersByTimeAsync(4 * STALL_MS);
    expect(reads()).toBe(0);
    // Stuck, but nothing is due in its class (another class's jobs do not count).
    due.clear();
    due.set('other', Date.now());
    child.runLoop = { phase: 'claiming', since: Date.now(), lastClaimAt: Date.now() };
    await vi.advanceTimersByTimeAsync(4 * STALL_MS);
    expect(reads()).toBeGreaterThan(0);
    expect(child.killed).toBeUndefined();
    expect(stalledLines()).toEqual([]);
    await watch.stop();
  });

  it('does not judge a silent child (the health watch does), one in a database outage, or a supervisor that cannot read', async () => {
    const { child, watch, failReads } = setup();
    child.runLoop = { phase: 'claiming', since: Date.now(), lastClaimAt: null };
    child.silentSince = Date.now();
    watch.start();
    await vi.advanceTimersByTimeAsync(4 * STALL_MS);
    // Answering again (a SIGSTOP ended, say): it is watched afresh, for a whole stallAfterMs.
    child.silentSince = undefined;
    child.dbOutage = { kind: 'connection', since: Date.now(), reason: 'Connection terminated' };
    await vi.advanceTimersByTimeAsync(4 * STALL_MS);
    child.dbOutage = undefined;
    failReads(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    await vi.advanceTimersByTimeAsync(4 * STALL_MS);
    expect(child.killed).toBeUndefined();
    await watch.stop();
  });

  it('starts watching afresh after its own turn came late: a stalled supervisor saw nothing of the gap', async () => {
    const { child, watch } = setup();
    child.runLoop = { phase: 'idle', since: Date.now(), lastClaimAt: Date.now() };
    watch.start();
    await vi.advanceTimersByTimeAsync(TICK_MS);
    // The whole process stops (no timer runs) for longer than the bound, then goes on.
    vi.setSystemTime(Date.now() + 4 * STALL_MS);
    await vi.advanceTimersByTimeAsync(STALL_MS - TICK_MS);
    expect(child.killed).toBeUndefined();
    await vi.advanceTimersByTimeAsync(3 * TICK_MS);
    expect(child.killed).toMatchObject({ reason: 'stalled' });
    await watch.stop();
  });
});
