/** The child's one timer for its jobs' deadlines (child/deadlines.ts), on fake timers. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Deadlines } from '../../child/deadlines.js';

describe('Deadlines', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('runs each deadline once it is due, in time order, and not before', async () => {
    const deadlines = new Deadlines();
    const ran: string[] = [];
    deadlines.after(300, () => ran.push('late'));
    deadlines.after(100, () => ran.push('early'));
    deadlines.after(200, () => ran.push('middle'));
    await vi.advanceTimersByTimeAsync(99);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(ran).toEqual(['early']);
    await vi.advanceTimersByTimeAsync(200);
    expect(ran).toEqual(['early', 'middle', 'late']);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(ran).toHaveLength(3);
  });

  it('runs no cancelled deadline, and still runs the later ones when the earliest was cancelled', async () => {
    const deadlines = new Deadlines();
    const ran: string[] = [];
    const first = deadlines.after(50, () => ran.push('cancelled'));
    deadlines.after(5_000, () => ran.push('runtime'));
    deadlines.cancel(first);
    deadlines.cancel(undefined);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(ran).toEqual(['runtime']);
  });

  it('keeps one timer for jobs that start and end back to back, and none once nothing is left', async () => {
    const deadlines = new Deadlines();
    for (let job = 0; job < 1_000; job++) {
      const start = deadlines.after(50, () => undefined);
      const runtime = deadlines.after(60_000, () => undefined);
      deadlines.cancel(start);
      deadlines.cancel(runtime);
    }
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(50);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('takes a deadline set by a deadline that ran', async () => {
    const deadlines = new Deadlines();
    const ran: number[] = [];
    deadlines.after(10, () => deadlines.after(10, () => ran.push(2)));
    await vi.advanceTimersByTimeAsync(20);
    expect(ran).toEqual([2]);
  });
});
