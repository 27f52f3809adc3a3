/**
 * IdleWait's rules with fake timers: a wait lasts a poll interval drawn from
 * [0.5, 1.5) × poll; a wake cuts it short, or makes the next wait return at
 * once; a job due back wakes it at its time, the earliest such time standing;
 * after close every wait returns at once.
 */
import { systemClock } from '../../src/clock.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IdleWait } from '../../child/idle-wait.js';

const POLL_MS = 1_000;

/** How long (fake) ms a wait took, up to `limitMs`; undefined if it was still waiting then. */
async function timed(wait: Promise<void>, limitMs: number): Promise<number | undefined> {
  const began = Date.now();
  let endedAt: number | undefined;
  void wait.then(() => (endedAt = Date.now()));
  for (let spent = 0; spent < limitMs && endedAt === undefined; spent++) await vi.advanceTimersByTimeAsync(1);
  return endedAt === undefined ? undefined : endedAt - began;
}

describe('IdleWait', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it('waits a poll interval scaled by a draw from [0.5, 1.5)', async () => {
    const idle = new IdleWait(POLL_MS, systemClock);
    vi.spyOn(Math, 'random').mockReturnValue(0);
    expect(await timed(idle.wait(), 2 * POLL_MS)).toBe(POLL_MS / 2);
    vi.spyOn(Math, 'random').mockReturnValue(0.75);
    expect(await timed(idle.wait(), 2 * POLL_MS)).toBe(POLL_MS * 1.25);
  });

  it('is cut short by a wake, and a wake between waits makes the next one return at once, once', async () => {
    const idle = new IdleWait(POLL_MS, systemClock);
    const waiting = idle.wait();
    await vi.advanceTimersByTimeAsync(10);
    idle.wake();
    expect(await timed(waiting, 1)).toBe(0);

    idle.wake();
    expect(await timed(idle.wait(), 1)).toBe(0);
    expect(await timed(idle.wait(), 10)).toBeUndefined();
  });

  it('wakes at the time a job of ours comes back; the earliest of two stands', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const idle = new IdleWait(POLL_MS, systemClock);
    idle.wakeAt(Date.now() + 300);
    idle.wakeAt(Date.now() + 100);
    idle.wakeAt(Date.now() + 200);
    expect(await timed(idle.wait(), POLL_MS)).toBe(100);
  });

  it('returns at once from every wait after close', async () => {
    const idle = new IdleWait(POLL_MS, systemClock);
    const waiting = idle.wait();
    idle.close();
    expect(await timed(waiting, 1)).toBe(0);
    expect(await timed(idle.wait(), 1)).toBe(0);
    expect(await timed(idle.wait(), 1)).toBe(0);
  });
});
