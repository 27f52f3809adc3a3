import { describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../../src/errors.js';
import type { ClaimedJob, Settlement, SettleResult } from '../../../src/store/types.js';
import { claimJobs, completeIfHeld, extendLease, failIfHeld, releaseIfHeld } from '../../helpers/fenced-writes.js';
import { fixedDelay, LEASE_MS, OWNER_A, OWNER_B, SWEEP, type Conformance } from './context.js';

/** Fencing (stale holders write nothing) and the sweeper. */
export function leaseSuites(c: Conformance): void {
  const { enqueue, claimOne, eventsOf } = c;
  describe('fencing', () => {
    it('rejects every write of a holder whose lease was taken back and given to another', async () => {
      const id = await enqueue();
      const zombie = await claimOne(OWNER_A);
      await c.store.jobStart({ id, leaseToken: zombie.leaseToken, leaseMs: LEASE_MS });
      c.clock.advance(LEASE_MS + 1);
      const recovered = await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay: fixedDelay(0), limit: 10 });
      expect(recovered).toMatchObject([{ id, status: 'QUEUED', ownerId: OWNER_A }]);
      const holder = await claimOne(OWNER_B);
      await c.store.jobStart({ id, leaseToken: holder.leaseToken, leaseMs: LEASE_MS });
      const before = { job: await c.store.jobGet({ id }), attempts: await c.store.attemptList({ jobId: id }) };

      const stale = { id, leaseToken: zombie.leaseToken };
      const writes: [string, () => Promise<unknown>][] = [
        ['heartbeat', () => extendLease(c.store, { ...stale, leaseMs: LEASE_MS })],
        ['progress', () => c.store.jobProgress({ ...stale, progress: '99' })],
        ['complete', () => completeIfHeld(c.store, { ...stale, result: '"zombie"' })],
        [
          'fail',
          () =>
            failIfHeld(c.store, { ...stale, error: { code: 'Z:Z', detail: 'z', retryable: true }, retryDelayMs: 0 }),
        ],
        ['start', () => c.store.jobStart({ ...stale, leaseMs: LEASE_MS })],
        ['release', () => releaseIfHeld(c.store, { ...stale, reason: 'zombie' })],
      ];
      for (const [name, write] of writes) {
        await expect(write(), name).rejects.toBeInstanceOf(LeaseLostError);
      }
      expect(await c.store.jobGet({ id })).toEqual(before.job);
      expect(await c.store.attemptList({ jobId: id })).toEqual(before.attempts);
      const rejected = (await c.store.eventList({ jobId: id })).filter((e) => e.event === 'ZOMBIE_WRITE_REJECTED');
      expect(rejected.map((e) => JSON.parse(e.detail!).op)).toEqual([
        'heartbeat',
        'progress',
        'complete',
        'fail',
        'start',
        'release',
      ]);

      await completeIfHeld(c.store, { id, leaseToken: holder.leaseToken, result: '"real"' });
      expect(await c.store.jobGet({ id })).toMatchObject({
        status: 'SUCCEEDED',
        result: '"real"',
        lease_token: holder.leaseToken,
      });
      expect((await c.store.attemptList({ jobId: id })).map((a) => a.status)).toEqual(['FAILED', 'SUCCEEDED']);
    });

    it('turns away a holder whose lease ran out though nobody took it back yet: it has given the job up', async () => {
      const id = await enqueue();
      const job = await claimOne();
      c.clock.advance(LEASE_MS);
      await expect(extendLease(c.store, { id, leaseToken: job.leaseToken, leaseMs: LEASE_MS })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
      await expect(
        completeIfHeld(c.store, { id, leaseToken: job.leaseToken, result: '"late"' }),
      ).rejects.toBeInstanceOf(LeaseLostError);
      expect(await c.store.jobGet({ id })).toMatchObject({
        status: 'CLAIMED',
        lease_token: job.leaseToken,
        lease_expires_at: c.clock.now(),
      });
      expect(
        (await c.store.eventList({ jobId: id }))
          .filter((e) => e.event === 'ZOMBIE_WRITE_REJECTED')
          .map((e) => JSON.parse(e.detail!).op),
      ).toEqual(['heartbeat', 'complete']);
      c.clock.advance(1);
      expect(await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay: fixedDelay(0), limit: 10 })).toMatchObject([
        { id, status: 'QUEUED' },
      ]);
    });

    it('counts a settlement sent again after it committed (its answer lost with the connection) as written, not as a zombie', async () => {
      const done = await enqueue();
      const retried = await enqueue();
      const failed = await enqueue();
      const [one, two, three] = await claimJobs(c.store, {
        classes: ['email'],
        ownerId: OWNER_A,
        limit: 3,
        leaseMs: LEASE_MS,
      });
      const settlements: Settlement[] = [
        {
          id: one!.id,
          leaseToken: one!.leaseToken,
          startedAt: c.clock.now(),
          verdict: { type: 'complete', result: '"ok"' },
        },
        {
          id: two!.id,
          leaseToken: two!.leaseToken,
          startedAt: c.clock.now(),
          verdict: { type: 'fail', error: { code: 'NET:DOWN', detail: 'again', retryable: true }, retryDelayMs: 500 },
        },
        {
          id: three!.id,
          leaseToken: three!.leaseToken,
          startedAt: c.clock.now(),
          verdict: { type: 'fail', error: { code: 'BAD:INPUT', detail: 'no', retryable: false }, retryDelayMs: 0 },
        },
      ];
      const first = (await c.store.jobsSettle({ settlements })).settled;
      const histories = async () =>
        Promise.all(
          [done, retried, failed].map(async (id) => [
            await c.store.attemptList({ jobId: id }),
            await c.store.eventList({ jobId: id }),
          ]),
        );
      const before = await histories();
      c.clock.advance(10);
      // The same answer but for the retry account, which only the write that decided it gives (the attempt row keeps no max_retries).
      const withoutAccount = (results: SettleResult[]) => results.map((r) => (r.held ? { ...r, retry: undefined } : r));
      expect(withoutAccount((await c.store.jobsSettle({ settlements })).settled)).toEqual(withoutAccount(first));
      expect(first.map((r) => r.held && r.status)).toEqual(['SUCCEEDED', 'QUEUED', 'FAILED']);
      expect(first.map((r) => r.held && r.retry)).toEqual([
        undefined,
        { run: 1, of: 6, rule: 'retries left' },
        { run: 1, of: 6, rule: 'not retryable' },
      ]);
      expect(await histories()).toEqual(before);

      // The same token with another verdict is no repeat: a zombie.
      const other: Settlement = { ...settlements[0]!, verdict: { type: 'release', reason: 'late' } };
      expect((await c.store.jobsSettle({ settlements: [other] })).settled).toEqual([{ id: done, held: false }]);
      expect(await eventsOf(done)).toContain('ZOMBIE_WRITE_REJECTED');
      expect([done, retried, failed]).toEqual([one!.id, two!.id, three!.id]);
    });

    it('rejects a write with a made-up token and writes no event for a job that does not exist', async () => {
      const id = await enqueue();
      await claimOne();
      await expect(c.store.jobProgress({ id, leaseToken: 'f'.repeat(32), progress: '1' })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
      await expect(
        c.store.jobProgress({ id: 999_999, leaseToken: 'f'.repeat(32), progress: '1' }),
      ).rejects.toBeInstanceOf(LeaseLostError);
    });
  });
  describe('the sweeper', () => {
    const retryDelay = fixedDelay(2_000);

    it('takes back expired leases with backoff, leaves renewed ones alone, and respects the batch limit', async () => {
      for (let i = 0; i < 5; i++) await enqueue();
      const jobs = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 5, leaseMs: LEASE_MS });
      for (const job of jobs) await c.store.jobStart({ id: job.id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      const renewed = jobs[4]!;
      c.clock.advance(LEASE_MS - 1_000);
      await extendLease(c.store, { id: renewed.id, leaseToken: renewed.leaseToken, leaseMs: LEASE_MS });
      c.clock.advance(2_000);

      const firstPass = await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 3 });
      expect(firstPass).toHaveLength(3);
      const secondPass = await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 3 });
      expect(secondPass).toHaveLength(1);
      expect(await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 3 })).toEqual([]);

      const taken = [...firstPass, ...secondPass].map((r) => r.id).sort((a, b) => a - b);
      expect(taken).toEqual(jobs.slice(0, 4).map((j) => j.id));
      for (const { id } of jobs.slice(0, 4)) {
        expect(await c.store.jobGet({ id })).toMatchObject({
          status: 'QUEUED',
          run_at: c.clock.now() + 2_000,
          error_code: 'LEASE:EXPIRED',
        });
        expect(await c.store.attemptList({ jobId: id })).toMatchObject([
          { status: 'FAILED', error_code: 'LEASE:EXPIRED' },
        ]);
        expect(await eventsOf(id)).toEqual(['ENQUEUED', 'STARTED', 'RECOVERED', 'RETRY_SCHEDULED']);
      }
      expect(await c.store.jobGet({ id: renewed.id })).toMatchObject({
        status: 'RUNNING',
        lease_token: renewed.leaseToken,
      });
    });

    it('two sweepers at once never take back the same job twice', async () => {
      const ids = (
        await c.queue.enqueueMany(Array.from({ length: 60 }, (_, n) => ({ class: 'email', payload: { n } })))
      ).map((j) => j.id);
      const jobs = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 60, leaseMs: LEASE_MS });
      for (const job of jobs.slice(0, 30))
        await c.store.jobStart({ id: job.id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      c.clock.advance(LEASE_MS + 1);
      const sweepUntilDry = async () => {
        const taken: number[] = [];
        for (;;) {
          const batch = await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 2 });
          if (batch.length === 0) return taken;
          taken.push(...batch.map((r) => r.id));
        }
      };
      const passes = await Promise.all([sweepUntilDry(), sweepUntilDry(), sweepUntilDry()]);
      const taken = passes.flat();
      expect(new Set(taken).size).toBe(taken.length);
      expect(taken.sort((a, b) => a - b)).toEqual(ids);
      for (const id of ids) {
        expect(await c.store.attemptList({ jobId: id })).toHaveLength(1);
        const timeline = await eventsOf(id);
        expect(timeline.filter((e) => e === 'RECOVERED' || e === 'RELEASED')).toHaveLength(1);
        expect(await c.store.jobGet({ id })).toMatchObject({ status: 'QUEUED', attempts: 1 });
      }
    });

    it('a holder writing past its expiry while the sweeper takes its jobs: the sweeper takes each once, the holder writes nothing', async () => {
      await c.queue.enqueueMany(Array.from({ length: 40 }, (_, n) => ({ class: 'email', payload: { n } })));
      const jobs = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 40, leaseMs: LEASE_MS });
      for (const job of jobs) await c.store.jobStart({ id: job.id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      c.clock.advance(LEASE_MS + 1);
      const settle = (batch: ClaimedJob[]) =>
        c.store.jobsSettle({
          settlements: batch.map((j) => ({
            id: j.id,
            leaseToken: j.leaseToken,
            startedAt: null,
            verdict: { type: 'complete' as const, result: '1' },
          })),
        });
      const sweep = async () => {
        const taken: number[] = [];
        for (let batch = await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 3 }); batch.length > 0;) {
          taken.push(...batch.map((r) => r.id));
          batch = await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 3 });
        }
        return taken;
      };
      // jobs settled from both ends while the sweeper walks them: on a server the two really interleave
      const settling = [jobs.slice(0, 5), jobs.slice(35), jobs.slice(5, 20), jobs.slice(20, 35)].map(settle);
      const [recovered, ...settledBatches] = await Promise.all([sweep(), ...settling]);
      // A sweep skips rows a settlement has locked; what it skipped, the next sweep takes.
      const taken = [...recovered, ...(await sweep())];
      expect(settledBatches.flatMap((b) => b.settled).filter((s) => s.held)).toEqual([]);
      expect(taken.sort((a, b) => a - b)).toEqual(jobs.map((j) => j.id).sort((a, b) => a - b));
      for (const { id } of jobs) {
        expect((await c.store.jobGet({ id }))?.status).toBe('QUEUED');
        expect((await c.store.attemptList({ jobId: id })).map((a) => a.status)).toEqual(['FAILED']);
        expect((await eventsOf(id)).filter((e) => e === 'ZOMBIE_WRITE_REJECTED')).toHaveLength(1);
      }
    });

    it('dead-letters a job whose last retry expired', async () => {
      const id = await enqueue({ maxRetries: 0 });
      const job = await claimOne();
      await c.store.jobStart({ id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      c.clock.advance(LEASE_MS + 1);
      expect(await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 10 })).toMatchObject([
        { id, status: 'FAILED' },
      ]);
      expect(await c.store.jobGet({ id })).toMatchObject({
        status: 'FAILED',
        error_code: 'LEASE:EXPIRED',
        finished_at: c.clock.now(),
      });
      expect(await eventsOf(id)).toEqual(['ENQUEUED', 'STARTED', 'RECOVERED', 'FAILED']);
    });

    it('counts a claimed job whose start was never written: only its holder can prove it never began', async () => {
      const id = await enqueue({ maxRetries: 0 });
      const claimedAt = c.clock.now();
      await claimOne();
      c.clock.advance(LEASE_MS + 1);
      expect(await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 10 })).toMatchObject([
        { id, status: 'FAILED', released: false },
      ]);
      expect(await c.store.jobGet({ id })).toMatchObject({
        status: 'FAILED',
        error_code: 'LEASE:EXPIRED',
        releases: 0,
      });
      // the claim wrote no event; the take-back writes it, stamped when the claim was made
      const timeline = await c.store.eventList({ jobId: id });
      expect(timeline.map((e) => [e.event, e.ts, e.actor])).toEqual([
        ['ENQUEUED', claimedAt, expect.any(String)],
        ['CLAIMED', claimedAt, OWNER_A],
        ['RECOVERED', c.clock.now(), SWEEP.actor],
        ['FAILED', c.clock.now(), SWEEP.actor],
      ]);
    });

    it('puts a handed-back job back in its place in the queue, not behind the jobs enqueued since', async () => {
      const first = await enqueue();
      const job = await claimOne();
      c.clock.advance(1_000);
      const later = await enqueue();
      await releaseIfHeld(c.store, { id: job.id, leaseToken: job.leaseToken, reason: 'shutdown' });
      expect(await eventsOf(first)).toEqual(['ENQUEUED', 'CLAIMED', 'RELEASED']);
      const next = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_B, limit: 2, leaseMs: LEASE_MS });
      expect(next.map((j) => j.id)).toEqual([first, later]);
    });

    it('lists what one owner holds, with its lease data', async () => {
      await enqueue();
      await enqueue();
      const [job] = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 1, leaseMs: LEASE_MS });
      await c.store.jobStart({ id: job!.id, leaseToken: job!.leaseToken, leaseMs: LEASE_MS });
      const held = await c.store.jobListHeldBy({ ownerId: OWNER_A });
      expect(held).toMatchObject([
        { id: job!.id, status: 'RUNNING', started_at: c.clock.now(), heartbeat_at: c.clock.now() },
      ]);
      expect(await c.store.jobListHeldBy({ ownerId: OWNER_B })).toEqual([]);
    });

    it('fails a poison job for good when told it is not retryable', async () => {
      const id = await enqueue({ maxRetries: 5 });
      const job = await claimOne();
      await c.store.jobStart({ id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      const recovered = await c.store.leasesRecoverByOwner({
        ownerId: OWNER_A,
        errorCode: 'WORKER:POISON',
        errorDetail: 'killed its child 3 times in a row',
        event: 'KILLED',
        actor: 'supervisor',
        retryDelay,
        retryable: false,
      });
      expect(recovered).toMatchObject([{ id, status: 'FAILED' }]);
      expect(await c.store.jobGet({ id })).toMatchObject({ status: 'FAILED', error_code: 'WORKER:POISON' });
    });

    it('takes back everything one owner held, at once', async () => {
      for (let i = 0; i < 3; i++) await enqueue();
      const mine = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 2, leaseMs: LEASE_MS });
      const theirs = await claimOne(OWNER_B);
      await c.store.jobStart({ id: mine[0]!.id, leaseToken: mine[0]!.leaseToken, leaseMs: LEASE_MS });
      const recovered = await c.store.leasesRecoverByOwner({
        ownerId: OWNER_A,
        errorCode: 'WORKER:CRASHED',
        errorDetail: 'child exited with signal SIGKILL',
        event: 'KILLED',
        actor: 'supervisor',
        retryDelay,
      });
      expect(recovered.map((r) => [r.id, r.released]).sort()).toEqual([
        [mine[0]!.id, false],
        [mine[1]!.id, false],
      ]);
      expect(await c.store.attemptList({ jobId: mine[0]!.id })).toMatchObject([
        { status: 'FAILED', error_code: 'WORKER:CRASHED' },
      ]);
      expect(await c.store.jobGet({ id: theirs.id })).toMatchObject({ status: 'CLAIMED', owner_id: OWNER_B });
    });

    it('cancels instead of requeueing a job whose cancel was requested', async () => {
      const id = await enqueue();
      const job = await claimOne();
      await c.store.jobStart({ id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      expect(await c.store.jobCancel({ id, actor: 'operator' })).toBe('cancel_requested');
      c.clock.advance(LEASE_MS + 1);
      expect(await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 10 })).toMatchObject([
        { id, status: 'CANCELLED' },
      ]);
    });
  });
}
