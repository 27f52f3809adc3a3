import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../src/backoff.js';

describe('retry backoff', () => {
  const policy = { baseSeconds: 2, maxSeconds: 300, jitter: false };

  it('doubles from the base and stops at the cap', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelayMs(policy, attempt))).toEqual([
      2_000, 4_000, 8_000, 16_000, 32_000,
    ]);
    expect(retryDelayMs(policy, 20)).toBe(300_000);
    expect(retryDelayMs(policy, 10_000)).toBe(300_000);
  });

  it('with jitter stays within [d/2, d] and actually varies', () => {
    const jittered = { ...policy, jitter: true };
    for (const attempt of [1, 3, 8, 12]) {
      const nominal = retryDelayMs(policy, attempt);
      const samples = Array.from({ length: 500 }, () => retryDelayMs(jittered, attempt));
      expect(Math.min(...samples)).toBeGreaterThanOrEqual(nominal / 2);
      expect(Math.max(...samples)).toBeLessThanOrEqual(nominal);
      expect(new Set(samples).size).toBeGreaterThan(50);
    }
    expect(retryDelayMs(jittered, 1, () => 0)).toBe(1_000);
    expect(retryDelayMs(jittered, 1, () => 1)).toBe(2_000);
  });
});
