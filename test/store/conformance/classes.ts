import { describe, expect, it } from 'vitest';
import type { ClaimRequest, RateLimit, Store } from '../../../src/store/types.js';
import { DEFAULT_MAX_RETRIES } from '../../../src/limits.js';
import { START_KEPT_EXTRA_MS, START_MARGIN_MS } from '../../../src/store/rate-limit.js';
import { claimJobs } from '../../helpers/fenced-writes.js';
import { LEASE_MS, OWNER_A, OWNER_B, type Conformance } from './context.js';

/** Another store on the same database (another process, another host). */
export type OpenSame = (store: Store, clock: Conformance['clock']) => Promise<Store>;

const claimOf = (owner: string, limit: number, rateLimit?: RateLimit, classes = ['email']): ClaimRequest => ({
  classes,
  ownerId: owner,
  limit,
  leaseMs: LEASE_MS,
  classMaxRetries: DEFAULT_MAX_RETRIES,
  ...(rateLimit === undefined ? {} : { rateLimit }),
});

/** Pause and resume, and rate-limited claims. */
export function classSuites(c: Conformance, openSame: OpenSame, countStarts: (store: Store) => Promise<number>): void {
  const enqueueMany = (count: number, jobClass = 'email') =>
    c.queue.enqueueMany(Array.from({ length: count }, (_, n) => ({ class: jobClass, payload: { n } })));

  describe('pause and resume', () => {
    it('a paused class claims nothing, alone or among others; resume restores it; both are idempotent and recorded', async () => {
      await enqueueMany(2);
      await enqueueMany(1, 'sms');
      expect(await c.store.classPause({ class: 'email', actor: 'alice' })).toBe('paused');
      expect(await c.store.classPause({ class: 'email', actor: 'bob' })).toBe('already_paused');
      const pausedAt = c.clock.now();
      expect(await c.store.classControlList()).toEqual([
        { class: 'email', paused_at: pausedAt, paused_by: 'alice', resumed_at: null, resumed_by: null },
      ]);

      expect(await claimJobs(c.store, claimOf(OWNER_A, 5))).toEqual([]);
      expect(await claimJobs(c.store, claimOf(OWNER_A, 5, { max: 10, perMs: 1000 }))).toEqual([]);
      // a claim of several classes skips the paused one only
      expect(
        (await claimJobs(c.store, claimOf(OWNER_A, 5, undefined, ['email', 'sms']))).map((job) => job.class),
      ).toEqual(['sms']);

      c.clock.advance(1000);
      expect(await c.store.classResume({ class: 'email', actor: 'bob' })).toBe('resumed');
      expect(await c.store.classResume({ class: 'email', actor: 'bob' })).toBe('not_paused');
      expect(await c.store.classResume({ class: 'never-paused', actor: 'bob' })).toBe('not_paused');
      expect(await c.store.classControlList()).toEqual([
        { class: 'email', paused_at: null, paused_by: 'alice', resumed_at: c.clock.now(), resumed_by: 'bob' },
      ]);
      expect(await claimJobs(c.store, claimOf(OWNER_A, 5))).toHaveLength(2);

      // paused again after a resume
      expect(await c.store.classPause({ class: 'email', actor: 'carol' })).toBe('paused');
      expect(await c.store.classControlList()).toEqual([
        { class: 'email', paused_at: c.clock.now(), paused_by: 'carol', resumed_at: c.clock.now(), resumed_by: 'bob' },
      ]);
    });
  });

  describe('rate limits', () => {
    const perSecond3: RateLimit = { max: 3, perMs: 1000 };

    it('caps the claims of a window across claimers, and says when the next start is allowed', async () => {
      await enqueueMany(10);
      const t0 = c.clock.now();
      expect(await c.store.classRateWindow({ class: 'email', rateLimit: perSecond3 })).toEqual({
        started: 0,
        due: true,
        next_start_at: null,
      });
      expect(await claimJobs(c.store, claimOf(OWNER_A, 2, perSecond3))).toHaveLength(2);
      c.clock.advance(400);
      expect(await claimJobs(c.store, claimOf(OWNER_B, 5, perSecond3))).toHaveLength(1);
      expect(await claimJobs(c.store, claimOf(OWNER_B, 5, perSecond3))).toEqual([]);
      expect(await c.store.classRateWindow({ class: 'email', rateLimit: perSecond3 })).toEqual({
        started: 3,
        due: true,
        next_start_at: t0 + 1000 + START_MARGIN_MS,
      });

      // a claim whose clock reading is older than the starts already granted still counts them
      c.clock.advance(-300);
      expect(await claimJobs(c.store, claimOf(OWNER_A, 5, perSecond3))).toEqual([]);

      c.clock.advance(300 + 600 + START_MARGIN_MS); // the first two leave the window (a second and the start margin), the third stays
      expect(await claimJobs(c.store, claimOf(OWNER_A, 5, perSecond3))).toHaveLength(2);
      // a claim that carries no limit is not held back
      expect(await claimJobs(c.store, claimOf(OWNER_A, 1))).toHaveLength(1);
    });

    it('holds across two connections claiming at once', async () => {
      await enqueueMany(40);
      const other = await openSame(c.store, c.clock);
      try {
        const perMinute5: RateLimit = { max: 5, perMs: 60_000 };
        const claims = Array.from({ length: 8 }, (_, n) =>
          claimJobs(n % 2 === 0 ? c.store : other, claimOf(`owner-${n}`, 3, perMinute5)),
        );
        const granted = (await Promise.all(claims)).flat();
        expect(granted).toHaveLength(5);
        expect(new Set(granted.map((job) => job.id)).size).toBe(5);
      } finally {
        await other.close();
      }
    });

    it('deletes the starts that left the window (and a margin for late clocks) as it claims', async () => {
      await enqueueMany(12);
      const tenPerSecond: RateLimit = { max: 10, perMs: 1000 };
      expect(await claimJobs(c.store, claimOf(OWNER_A, 4, tenPerSecond))).toHaveLength(4);
      c.clock.advance(500);
      expect(await claimJobs(c.store, claimOf(OWNER_A, 4, tenPerSecond))).toHaveLength(4);
      expect(await countStarts(c.store)).toBe(8);
      c.clock.advance(1000 + START_MARGIN_MS + START_KEPT_EXTRA_MS - 500); // the first 4 are past the margin now, the next 4 not yet
      expect(await claimJobs(c.store, claimOf(OWNER_A, 1, tenPerSecond))).toHaveLength(1);
      expect(await countStarts(c.store)).toBe(5);
      c.clock.advance(500);
      expect(await claimJobs(c.store, claimOf(OWNER_A, 1, tenPerSecond))).toHaveLength(1);
      expect(await countStarts(c.store)).toBe(2);
    });

    it('a window with room, or with nothing due, is not waiting', async () => {
      await c.queue.enqueue({ class: 'email', payload: {}, delay: 60 });
      expect(await c.store.classRateWindow({ class: 'email', rateLimit: perSecond3 })).toEqual({
        started: 0,
        due: false,
        next_start_at: null,
      });
    });
  });
}
