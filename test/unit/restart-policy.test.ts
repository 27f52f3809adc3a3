/**
 * RestartPolicy's rules: more than max_restarts crashes within
 * within_seconds is a crash loop; older crashes leave the window; the delay
 * doubles with each fruitless crash in a row of a slot, up to a cap.
 */
import { describe, expect, it } from 'vitest';
import { RESTART_BASE_DELAY_MS, RESTART_MAX_DELAY_MS, RestartPolicy } from '../../supervisor/restart-policy.js';

describe('RestartPolicy', () => {
  it('restarts up to max_restarts crashes within the window, and gives up on the next', () => {
    const policy = new RestartPolicy({ max_restarts: 3, within_seconds: 60 });
    const decisions = [0, 1_000, 2_000, 3_000].map((at) => policy.onCrash(at, 1));
    expect(decisions.map((decision) => decision.restart)).toEqual([true, true, true, false]);
    expect(decisions[3]).toEqual({ restart: false, recentCrashes: 4 });
  });

  it('forgets crashes older than within_seconds', () => {
    const policy = new RestartPolicy({ max_restarts: 2, within_seconds: 10 });
    policy.onCrash(0, 1);
    policy.onCrash(5_000, 1);
    // The first crash left the window at 10 s: two recent crashes, not three.
    expect(policy.onCrash(10_000, 1)).toMatchObject({ restart: true, recentCrashes: 2 });
    expect(policy.onCrash(10_001, 1)).toMatchObject({ restart: false, recentCrashes: 3 });
  });

  it('never restarts with max_restarts 0', () => {
    expect(new RestartPolicy({ max_restarts: 0, within_seconds: 60 }).onCrash(0, 1).restart).toBe(false);
  });

  it('doubles the delay with each fruitless crash in a row, up to the cap', () => {
    const policy = new RestartPolicy({ max_restarts: 100, within_seconds: 1 });
    const delays = [1, 2, 3, 4, 10].map((fruitless, index) => {
      const decision = policy.onCrash(index * 10_000, fruitless);
      return decision.restart ? decision.delayMs : undefined;
    });
    expect(delays).toEqual([
      RESTART_BASE_DELAY_MS,
      2 * RESTART_BASE_DELAY_MS,
      4 * RESTART_BASE_DELAY_MS,
      8 * RESTART_BASE_DELAY_MS,
      RESTART_MAX_DELAY_MS,
    ]);
  });
});
