import { describe, expect, it } from 'vitest';
import type { ClaimedJob } from '../../../src/store/types.js';
import { claimJobs } from '../../helpers/fenced-writes.js';
import { fixedDelay, LEASE_MS, OWNER_A, OWNER_B, type Conformance } from './context.js';

/** The batched hot path: a batch's outcomes and the next claim in one call. */
export function hotPathSuites(c: Conformance): void {
  const { enqueue, claimOne, eventsOf } = c;
  describe('the batched hot path', () => {
    it('settles several outcomes and claims the next batch in one call, stamping lazy starts', async () => {
      const ids = [
        await enqueue(),
        await enqueue({ maxRetries: 0 }),
        await enqueue(),
        await enqueue(),
        await enqueue(),
      ];
      const batch = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 3, leaseMs: LEASE_MS });
      expect(batch.map((j) => j.id)).toEqual(ids.slice(0, 3));
      expect(await c.store.jobGet({ id: ids[0]! })).toMatchObject({ status: 'CLAIMED', started_at: null });
      const startedAt = c.clock.now() + 5;
      c.clock.advance(50);
      const [first, second, third] = batch as [ClaimedJob, ClaimedJob, ClaimedJob];
      const { settled, claimed } = await c.store.jobsSettle({
        settlements: [
          { id: first.id, leaseToken: first.leaseToken, startedAt, verdict: { type: 'complete', result: '1' } },
          {
            id: second.id,
            leaseToken: second.leaseToken,
            startedAt: startedAt + 10,
            verdict: { type: 'fail', error: { code: 'X:Y', detail: 'no', retryable: true }, retryDelayMs: 1_000 },
          },
          { id: third.id, leaseToken: 'f'.repeat(32), startedAt, verdict: { type: 'complete', result: '3' } },
        ],
        claim: { classes: ['email'], ownerId: OWNER_A, limit: 10, leaseMs: LEASE_MS, classMaxRetries: 5 },
      });
      expect(settled).toEqual([
        { id: first.id, held: true, status: 'SUCCEEDED', runAt: null },
        // Its one run of the one it may have (max_retries 0): the rule says why it was dead-lettered.
        { id: second.id, held: true, status: 'FAILED', runAt: null, retry: { run: 1, of: 1, rule: 'no retries left' } },
        { id: third.id, held: false },
      ]);
      expect(claimed.map((j) => j.id)).toEqual(ids.slice(3));
      expect(await c.store.jobGet({ id: first.id })).toMatchObject({
        status: 'SUCCEEDED',
        started_at: startedAt,
        result: '1',
      });
      const timeline = await c.store.eventList({ jobId: first.id });
      expect(timeline.map((e) => [e.event, e.ts])).toEqual([
        ['ENQUEUED', startedAt - 5],
        ['STARTED', startedAt],
        ['SUCCEEDED', c.clock.now()],
      ]);
      expect(JSON.parse(timeline[1]!.detail!)).toEqual({ attempt: 1, owner_id: OWNER_A, claimed_at: startedAt - 5 });
      expect((await c.store.eventList({ jobId: third.id })).map((e) => e.event)).toEqual([
        'ENQUEUED',
        'ZOMBIE_WRITE_REJECTED',
      ]);
      expect(await c.store.jobGet({ id: third.id })).toMatchObject({
        status: 'CLAIMED',
        lease_token: third.leaseToken,
      });
    });

    it('writes every success of a batch, each with its own result, start and attempt end', async () => {
      const ids = [await enqueue(), await enqueue(), await enqueue()];
      const batch = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 3, leaseMs: LEASE_MS });
      const startedAt = c.clock.now() + 1;
      c.clock.advance(20);
      const { settled } = await c.store.jobsSettle({
        settlements: batch.map((job, i) => ({
          id: job.id,
          leaseToken: job.leaseToken,
          startedAt: startedAt + i,
          verdict: { type: 'complete' as const, result: i === 1 ? null : `{"n":${i}}` },
        })),
      });
      expect(settled.map((s) => [s.id, s.held])).toEqual(ids.map((id) => [id, true]));
      for (const [i, id] of ids.entries()) {
        expect(await c.store.jobGet({ id })).toMatchObject({
          status: 'SUCCEEDED',
          result: i === 1 ? null : `{"n":${i}}`,
          started_at: startedAt + i,
          finished_at: c.clock.now(),
        });
        expect((await c.store.attemptList({ jobId: id })).map((a) => [a.attempt, a.status, a.finished_at])).toEqual([
          [1, 'SUCCEEDED', c.clock.now()],
        ]);
      }
    });

    it('a batch of successes only, with its claim: live leases written with their timeline, a stale one turned away, the batch sent again counted as written', async () => {
      const ids = [await enqueue(), await enqueue(), await enqueue(), await enqueue()];
      const [live, running, stale] = (await claimJobs(c.store, {
        classes: ['email'],
        ownerId: OWNER_A,
        limit: 3,
        leaseMs: LEASE_MS,
      })) as [ClaimedJob, ClaimedJob, ClaimedJob];
      const claimedAt = c.clock.now();
      c.clock.advance(3);
      await c.store.jobStart({ id: running.id, leaseToken: running.leaseToken, leaseMs: LEASE_MS });
      const startedAt = c.clock.now() + 1;
      c.clock.advance(10);
      const settlements = [
        {
          id: live.id,
          leaseToken: live.leaseToken,
          startedAt,
          verdict: { type: 'complete' as const, result: '"a"' },
          cost: { cpuMs: 1.5, peakRssBytes: 2048 },
        },
        {
          id: running.id,
          leaseToken: running.leaseToken,
          startedAt: null,
          verdict: { type: 'complete' as const, result: null },
        },
        { id: stale.id, leaseToken: 'f'.repeat(32), startedAt, verdict: { type: 'complete' as const, result: '"z"' } },
      ];
      const claim = { classes: ['email'], ownerId: OWNER_B, limit: 5, leaseMs: LEASE_MS, classMaxRetries: 5 };
      const first = await c.store.jobsSettle({ settlements, claim });
      expect(first.settled).toEqual([
        { id: live.id, held: true, status: 'SUCCEEDED', runAt: null },
        { id: running.id, held: true, status: 'SUCCEEDED', runAt: null },
        { id: stale.id, held: false },
      ]);
      expect(first.claimed.map((j) => [j.id, j.attempt])).toEqual([[ids[3], 1]]);
      expect(await c.store.attemptList({ jobId: ids[3]! })).toMatchObject([
        { attempt: 1, owner_id: OWNER_B, status: 'RUNNING' },
      ]);
      expect(await c.store.jobGet({ id: live.id })).toMatchObject({
        status: 'SUCCEEDED',
        result: '"a"',
        started_at: startedAt,
        finished_at: c.clock.now(),
        lease_expires_at: null,
      });
      expect(await c.store.attemptList({ jobId: live.id })).toMatchObject([
        { status: 'SUCCEEDED', finished_at: c.clock.now(), cpu_ms: 1.5, peak_rss_bytes: 2048 },
      ]);
      // The start carries the claim, its detail exactly as every writer of the timeline spells it.
      const timeline = await c.store.eventList({ jobId: live.id });
      expect(timeline.map((e) => [e.event, e.ts, e.actor, e.detail])).toEqual([
        ['ENQUEUED', claimedAt, expect.any(String), expect.any(String)],
        ['STARTED', startedAt, 'worker', JSON.stringify({ attempt: 1, owner_id: OWNER_A, claimed_at: claimedAt })],
        ['SUCCEEDED', c.clock.now(), 'worker', JSON.stringify({ attempt: 1 })],
      ]);
      expect(await eventsOf(running.id)).toEqual(['ENQUEUED', 'STARTED', 'SUCCEEDED']);
      expect(await eventsOf(stale.id)).toEqual(['ENQUEUED', 'ZOMBIE_WRITE_REJECTED']);
      expect(await c.store.jobGet({ id: stale.id })).toMatchObject({
        status: 'CLAIMED',
        lease_token: stale.leaseToken,
      });

      // Sent again (its answer lost with the connection): the same answers, nothing written twice, no zombie for a lease it settled.
      c.clock.advance(5);
      const again = await c.store.jobsSettle({ settlements: settlements.slice(0, 2) });
      expect(again.settled).toEqual(first.settled.slice(0, 2));
      expect(await eventsOf(live.id)).toEqual(['ENQUEUED', 'STARTED', 'SUCCEEDED']);
      expect(await eventsOf(running.id)).toEqual(['ENQUEUED', 'STARTED', 'SUCCEEDED']);
    });

    it('does not restamp a start that was already written', async () => {
      const id = await enqueue();
      const job = await claimOne();
      await c.store.jobStart({ id, leaseToken: job.leaseToken, leaseMs: LEASE_MS, startedAt: c.clock.now() + 1 });
      c.clock.advance(100);
      await c.store.jobsSettle({
        settlements: [
          { id, leaseToken: job.leaseToken, startedAt: c.clock.now(), verdict: { type: 'complete', result: null } },
        ],
      });
      expect(await c.store.jobGet({ id })).toMatchObject({ started_at: c.clock.now() - 99 });
      expect((await eventsOf(id)).filter((e) => e === 'STARTED')).toHaveLength(1);
    });

    it('renews every lease a worker holds in one heartbeat and reports lost ones', async () => {
      await enqueue();
      await enqueue();
      const [a, b] = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 2, leaseMs: LEASE_MS });
      await c.store.jobCancel({ id: b!.id, actor: 'operator' });
      c.clock.advance(1_000);
      const statuses = await c.store.leasesExtend({
        leases: [a!, b!, { id: a!.id, leaseToken: 'f'.repeat(32) }].map((j) => ({
          id: j.id,
          leaseToken: j.leaseToken,
        })),
        leaseMs: LEASE_MS,
      });
      expect(statuses).toEqual([
        { id: a!.id, held: true, leaseExpiresAt: c.clock.now() + LEASE_MS, cancelRequested: false },
        { id: b!.id, held: true, leaseExpiresAt: c.clock.now() + LEASE_MS, cancelRequested: true },
        { id: a!.id, held: false },
      ]);
    });

    it('counts a claim as a start: taking back what an owner held spends a retry, unless a culprit is named', async () => {
      const culprit = await enqueue({ maxRetries: 0 });
      const victim = await enqueue({ maxRetries: 0 });
      await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 2, leaseMs: LEASE_MS });
      const crash = {
        errorCode: 'WORKER:CRASHED',
        errorDetail: 'child exited with code 1',
        event: 'RECOVERED' as const,
        actor: 'supervisor',
        retryDelay: fixedDelay(0),
      };
      const named = await c.store.leasesRecoverByOwner({ ...crash, ownerId: OWNER_A, culpritJobId: culprit });
      expect(named.map((r) => [r.id, r.status, r.released]).sort()).toEqual([
        [culprit, 'FAILED', false],
        [victim, 'QUEUED', true],
      ]);
      expect(await c.store.attemptList({ jobId: victim })).toMatchObject([
        {
          status: 'CANCELLED',
          error_code: 'LEASE:RELEASED',
          error_detail: `victim of job ${culprit} (WORKER:CRASHED)`,
        },
      ]);

      await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 1, leaseMs: LEASE_MS });
      const unnamed = await c.store.leasesRecoverByOwner({ ...crash, ownerId: OWNER_A });
      expect(unnamed).toMatchObject([{ id: victim, status: 'FAILED', released: false }]);
    });
  });
}
