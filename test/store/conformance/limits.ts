import { describe, expect, it } from 'vitest';
import type { ClaimRequest, ClaimedJob } from '../../../src/store/types.js';
import { claimJobs, failIfHeld } from '../../helpers/fenced-writes.js';
import { fixedDelay, LEASE_MS, OWNER_A, SWEEP, type Conformance } from './context.js';

const FAILURE = { code: 'UPSTREAM:DOWN', detail: 'down', retryable: true };

/**
 * A job whose enqueue set no max_retries takes its class's, written by every
 * claim from the claimer's class config (`classMaxRetries`), so that whoever
 * decides about the job later (its worker, a supervisor, the sweeper of any
 * host, `show`) reads one value. An enqueue's own max_retries is kept.
 */
export function limitSuites(c: Conformance): void {
  const { enqueue } = c;
  /** A claim after another job's failure in the same batch: the general path of a settle (PostgreSQL runs its own claim statements there). */
  const claimAfterFailure = async (request: ClaimRequest) => {
    await enqueue({ class: 'other', maxRetries: 3 });
    const [held] = await claimJobs(c.store, {
      classes: ['other'],
      ownerId: OWNER_A,
      limit: 1,
      leaseMs: LEASE_MS,
      classMaxRetries: 3,
    });
    const failure = {
      id: held!.id,
      leaseToken: held!.leaseToken,
      startedAt: null,
      verdict: { type: 'fail' as const, error: FAILURE, retryDelayMs: 60_000 },
    };
    return (await c.store.jobsSettle({ settlements: [failure], claim: request })).claimed;
  };
  const claimAlone = (request: ClaimRequest) => claimJobs(c.store, request);
  /** Every claim statement of both drivers, by the shape of the call that runs it. */
  const claimShapes: [string, string[], (request: ClaimRequest) => Promise<ClaimedJob[]>][] = [
    ['a claim of one class', ['email'], claimAlone],
    ['a claim of several classes', ['email', 'sms'], claimAlone],
    ['a claim of one class after a failure in its batch', ['email'], claimAfterFailure],
    ['a claim of several classes after a failure in its batch', ['email', 'sms'], claimAfterFailure],
    ['a rate-limited claim', ['email'], (request) => claimAlone({ ...request, rateLimit: { max: 100, perMs: 1_000 } })],
  ];

  describe("a class's max_retries", () => {
    it("an enqueue without max_retries is marked as taking its class's; one with its own keeps it (bulk, keyed, single)", async () => {
      const [bulkClass, bulkOwn] = await c.queue.enqueueMany([{ class: 'email' }, { class: 'email', maxRetries: 3 }]);
      const keyed = await enqueue({ key: 'k-1' });
      const single = await enqueue({ maxRetries: 0 });
      const rows = await Promise.all([bulkClass!.id, bulkOwn!.id, keyed, single].map((id) => c.store.jobGet({ id })));
      expect(rows.map((row) => row?.max_retries_from_class)).toEqual([1, 0, 1, 0]);
      expect([rows[1]?.max_retries, rows[3]?.max_retries]).toEqual([3, 0]);
    });

    for (const [shape, classes, claim] of claimShapes) {
      it(`${shape} writes the claimer's class max_retries on the jobs that take it, and keeps an enqueue's own`, async () => {
        const fromClass = await enqueue();
        const own = await enqueue({ maxRetries: 1 });
        const claimed = await claim({ classes, ownerId: OWNER_A, limit: 10, leaseMs: LEASE_MS, classMaxRetries: 2 });
        expect(claimed.map((job) => [job.id, job.maxRetries])).toEqual([
          [fromClass, 2],
          [own, 1],
        ]);
        expect(await c.store.jobGet({ id: fromClass })).toMatchObject({ max_retries: 2, max_retries_from_class: 1 });
        expect(await c.store.jobGet({ id: own })).toMatchObject({ max_retries: 1, max_retries_from_class: 0 });
      });
    }

    it("each claim writes the claimer's value again (a reload applies from the next claim); the value written decides a failure and a sweep", async () => {
      const claimWith = async (classMaxRetries: number) => {
        const [job] = await claimJobs(c.store, {
          classes: ['email'],
          ownerId: OWNER_A,
          limit: 1,
          leaseMs: LEASE_MS,
          classMaxRetries,
        });
        if (job === undefined) throw new Error('expected a job to claim');
        return job;
      };
      const failAfter = async (classMaxRetries: number) => {
        const job = await claimWith(classMaxRetries);
        expect(job.maxRetries).toBe(classMaxRetries);
        return (await failIfHeld(c.store, { id: job.id, leaseToken: job.leaseToken, error: FAILURE, retryDelayMs: 0 }))
          .status;
      };
      const id = await enqueue();
      expect(await failAfter(1)).toBe('QUEUED');
      expect(await failAfter(3)).toBe('QUEUED');
      expect(await failAfter(1)).toBe('FAILED');
      expect(await c.store.jobGet({ id })).toMatchObject({ attempts: 3, max_retries: 1, max_retries_from_class: 1 });

      // the sweeper needs no config: the claim's value is on the row
      const swept = await enqueue();
      await claimWith(0);
      c.clock.advance(LEASE_MS + 1);
      expect(await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay: fixedDelay(0), limit: 10 })).toMatchObject([
        { id: swept, status: 'FAILED' },
      ]);
    });
  });
}
