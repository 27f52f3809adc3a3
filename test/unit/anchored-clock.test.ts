import { describe, expect, it } from 'vitest';
import { AnchoredClock, monotonicMs, stepTowardsWall } from '../../src/clock.js';

describe('AnchoredClock', () => {
  it("runs from its anchor on the monotonic clock, whatever this host's wall clock says", () => {
    const clock = new AnchoredClock({ wallMs: 1_000_000, monotonicMs: monotonicMs() - 250 });
    const reading = clock.now();
    expect(reading).toBeGreaterThanOrEqual(1_000_250);
    expect(reading).toBeLessThan(1_000_250 + 60_000);
  });

  it('follows a new anchor forwards, and never runs backwards when a new one is behind', () => {
    const at = monotonicMs();
    const clock = new AnchoredClock({ wallMs: 5_000_000, monotonicMs: at });
    const first = clock.now();
    clock.reanchor({ wallMs: 5_000_000 + 30_000, monotonicMs: at });
    const ahead = clock.now();
    expect(ahead).toBeGreaterThanOrEqual(first + 30_000);
    clock.reanchor({ wallMs: 5_000_000 - 30_000, monotonicMs: at });
    expect(clock.now()).toBe(ahead);
  });
});

describe('stepTowardsWall', () => {
  const anchor = { wallMs: 1_000_000, monotonicMs: 500 };

  it('keeps the reading of now and moves it towards the wall clock by at most the step, either way', () => {
    // At monotonic 1500 the anchor reads 1_001_000.
    expect(stepTowardsWall(anchor, 1_031_000, 1_500, 500)).toEqual({ wallMs: 1_001_500, monotonicMs: 1_500 });
    expect(stepTowardsWall(anchor, 971_000, 1_500, 500)).toEqual({ wallMs: 1_000_500, monotonicMs: 1_500 });
  });

  it('lands on the wall clock when it is within a step', () => {
    expect(stepTowardsWall(anchor, 1_001_200, 1_500, 500)).toEqual({ wallMs: 1_001_200, monotonicMs: 1_500 });
    expect(stepTowardsWall(anchor, 1_001_000, 1_500, 500)).toEqual({ wallMs: 1_001_000, monotonicMs: 1_500 });
  });
});
