import { describe, expect, it } from 'vitest';
import { AnchoredClock, monotonicMs } from '../../src/clock.js';

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
