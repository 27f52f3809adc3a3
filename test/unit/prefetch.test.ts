/**
 * The prefetch's rules, on their own: what a claim asks for beyond the free
 * slots, as claims come back and handlers end.
 */
import { describe, expect, it } from 'vitest';
import { FLUSH_AFTER_MS } from '../../child/group-commit.js';
import { Prefetch } from '../../child/prefetch.js';

/** The prefetch of `claims` claims in a row, each bringing what it asked for plus the free slots, with jobs of `jobMs`. */
function claims(prefetch: Prefetch, count: number, jobMs: number, slots = 1): number[] {
  const asked: number[] = [];
  for (let i = 0; i < count; i++) {
    const extra = prefetch.next();
    asked.push(extra);
    prefetch.claimed(slots + extra);
    for (let j = 0; j < slots + extra; j++) prefetch.jobEnded(jobMs);
  }
  return asked;
}

describe('prefetch', () => {
  it('grows 0, 1, 3, 7 ... while claims bring jobs, up to claim_batch held', () => {
    expect(claims(new Prefetch({ slots: 1, claimBatch: 64, rateLimited: false }), 8, 0.05)).toEqual([
      0, 1, 3, 7, 15, 31, 63, 63,
    ]);
    expect(claims(new Prefetch({ slots: 4, claimBatch: 16, rateLimited: false }), 5, 0.05, 4)).toEqual([
      0, 1, 3, 7, 12,
    ]);
  });

  it('jobs of 5 ms: a few to a transaction, what one slot starts within half of FLUSH_AFTER_MS', () => {
    const startable = Math.floor(FLUSH_AFTER_MS / 2 / 5);
    expect(startable).toBe(2);
    // once the moving average has the 5 ms
    expect(claims(new Prefetch({ slots: 1, claimBatch: 64, rateLimited: false }), 16, 5).slice(-4)).toEqual([
      startable,
      startable,
      startable,
      startable,
    ]);
  });

  it('20 slots of 5 ms jobs with the default claim_batch (40): the next 20 wait ready while the slots run', () => {
    expect(claims(new Prefetch({ slots: 20, claimBatch: 40, rateLimited: false }), 7, 5, 20)).toEqual([
      0, 1, 3, 7, 15, 20, 20,
    ]);
  });

  it('a job that looked slow (its child preempted) shrinks the next claim, and what was earned comes back at once', () => {
    const prefetch = new Prefetch({ slots: 1, claimBatch: 64, rateLimited: false });
    claims(prefetch, 8, 0.05);
    prefetch.jobEnded(30);
    expect(prefetch.next()).toBe(Math.floor(FLUSH_AFTER_MS / 2 / (0.05 + (30 - 0.05) / 8)));
    prefetch.claimed(1);
    for (let i = 0; i < 40; i++) prefetch.jobEnded(0.05);
    expect(prefetch.next()).toBe(63);
  });

  it('back to none after a hand-back or an empty claim, and none at all for a rate-limited class', () => {
    const handedBack = new Prefetch({ slots: 1, claimBatch: 64, rateLimited: false });
    claims(handedBack, 4, 0.05);
    handedBack.handedBack();
    expect(claims(handedBack, 3, 0.05)).toEqual([0, 1, 3]);

    const emptied = new Prefetch({ slots: 1, claimBatch: 64, rateLimited: false });
    claims(emptied, 4, 0.05);
    emptied.claimed(0);
    expect(emptied.next()).toBe(0);

    expect(claims(new Prefetch({ slots: 1, claimBatch: 64, rateLimited: true }), 3, 0.05)).toEqual([0, 0, 0]);
  });
});
