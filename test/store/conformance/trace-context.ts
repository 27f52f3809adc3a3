import { describe, expect, it } from 'vitest';
import { prepareJob, type EnqueueRequest } from '../../../src/queue/enqueue.js';
import type { ClaimedJob } from '../../../src/store/types.js';
import { claimJobs } from '../../helpers/fenced-writes.js';
import { fixedDelay, LEASE_MS, OWNER_A, SWEEP, type Conformance } from './context.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const WITH_STATE = `${PARENT} vendor=abc,other=1`;

/** jobs.traceparent: stored with each job, given back by every claim and by a take-back. */
export function traceContextSuites(c: Conformance): void {
  const insert = (requests: (EnqueueRequest & { traceparent: string | null })[]) =>
    c.store.jobInsert({
      jobs: requests.map(({ traceparent, ...request }) => ({ ...prepareJob(request, c.clock), traceparent })),
      actor: 'test',
    });
  const claimAll = () => claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 10, leaseMs: LEASE_MS });
  const contexts = (jobs: ClaimedJob[]) => jobs.map((job) => job.traceparent);

  describe('the trace context stored with a job', () => {
    it('keeps each job’s context through a batch insert, keyed or not, and gives it to the claim', async () => {
      await insert([
        { class: 'email', traceparent: PARENT },
        { class: 'email', traceparent: null },
      ]);
      await insert([{ class: 'email', key: 'k', traceparent: WITH_STATE }]);
      expect(contexts(await claimAll())).toEqual([PARENT, null, WITH_STATE]);
    });

    it('gives it to the claim made with a settlement, and to the take-back of a dead owner’s job', async () => {
      await insert([
        { class: 'email', traceparent: PARENT },
        { class: 'email', traceparent: WITH_STATE },
      ]);
      const [first] = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 1, leaseMs: LEASE_MS });
      const { claimed } = await c.store.jobsSettle({
        settlements: [
          {
            id: first!.id,
            leaseToken: first!.leaseToken,
            startedAt: null,
            verdict: { type: 'complete', result: null },
          },
        ],
        claim: { classes: ['email'], ownerId: OWNER_A, limit: 1, leaseMs: LEASE_MS, classMaxRetries: 3 },
      });
      expect(contexts(claimed)).toEqual([WITH_STATE]);
      await c.store.jobStart({ id: claimed[0]!.id, leaseToken: claimed[0]!.leaseToken, leaseMs: LEASE_MS });
      const recovered = await c.store.leasesRecoverByOwner({ ...SWEEP, ownerId: OWNER_A, retryDelay: fixedDelay(0) });
      expect(recovered).toMatchObject([
        { id: claimed[0]!.id, traceparent: WITH_STATE, claimedAt: claimed[0]!.claimedAt },
      ]);
    });
  });
}
