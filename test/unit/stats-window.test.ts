import { describe, expect, it } from 'vitest';
import { isCatchUp, MINUTE_MS, nextRollUp, ROLLUP_STRIDE_MS, windowParts } from '../../src/store/stats-window.js';
import { ROLLUP_INTERVAL_MS } from '../../supervisor/stats-rollup.js';

const M = Date.UTC(2026, 0, 1, 12); // a minute's start

describe('the stats rollup window (src/store/stats-window.ts)', () => {
  it('sums up to the grace before now, in the middle of a minute, and on from there at the next roll-up', () => {
    const first = nextRollUp({ from: M - 10 * MINUTE_MS, until: M }, M + 30_000, 5, 1_000);
    expect(first).toEqual({ from: M, until: M + 29_000 });
    expect(nextRollUp({ from: M - 10 * MINUTE_MS, until: M + 29_000 }, M + 31_500, 5, 1_000)).toEqual({
      from: M + 29_000,
      until: M + 30_500,
    });
    // nothing new since the last roll-up's end
    expect(nextRollUp({ from: M - 10 * MINUTE_MS, until: M + 29_000 }, M + 30_000, 5, 1_000)).toBeUndefined();
  });

  it("waits for a stride, shorter than the supervisor's interval: one supervisor alone sums at every tick", () => {
    const rolled = { from: M - 10 * MINUTE_MS, until: M };
    expect(nextRollUp(rolled, M + 1_000 + ROLLUP_STRIDE_MS - 1, 5, 1_000)).toBeUndefined();
    expect(nextRollUp(rolled, M + 1_000 + ROLLUP_STRIDE_MS, 5, 1_000)).toEqual({
      from: M,
      until: M + ROLLUP_STRIDE_MS,
    });
    expect(ROLLUP_STRIDE_MS).toBeLessThan(ROLLUP_INTERVAL_MS);
  });

  it('a range of maxMinutes whole is a catch-up, summed even with nothing ended; the tail is not', () => {
    const behind = nextRollUp({ from: M - 25 * 60 * MINUTE_MS, until: M - 24 * 60 * MINUTE_MS }, M, 5, 1_000)!;
    expect(isCatchUp(behind, 5)).toBe(true);
    const tail = nextRollUp({ from: M - 10 * MINUTE_MS, until: M - 30_000 }, M, 5, 1_000)!;
    expect(isCatchUp(tail, 5)).toBe(false);
  });

  it('sums at most maxMinutes at a time', () => {
    expect(nextRollUp({ from: M - 10 * MINUTE_MS, until: M }, M + 30 * MINUTE_MS, 5, 60_000)).toEqual({
      from: M,
      until: M + 5 * MINUTE_MS,
    });
  });

  it('reads a window from a rollup that ends mid-minute: the summed part of that minute from the rollup, the rest from the jobs', () => {
    const rolled = { from: M - 10 * MINUTE_MS, until: M + 29_000 };
    expect(windowParts(M - 5 * MINUTE_MS - 1, rolled)).toEqual({
      headFrom: M - 5 * MINUTE_MS - 1,
      headUntil: M - 5 * MINUTE_MS,
      rolledFrom: M - 5 * MINUTE_MS,
      rolledUntil: M + 29_000,
      tailFrom: M + 29_000,
    });
    // a chart that stops at a minute's start reads no part of a later minute from the rollup
    expect(windowParts(M - 5 * MINUTE_MS, rolled, { until: M + 10_000 })).toMatchObject({
      rolledUntil: M,
      tailFrom: M,
    });
  });
});
