import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError, LeaseLostError } from '../../src/errors.js';
import { prepareJob, type EnqueueRequest } from '../../src/queue/enqueue.js';
import { Queue } from '../../src/queue/queue.js';
import { collectStats } from '../../src/cli/reports/stats.js';
import type { ClaimedJob, RecoverParams, Store } from '../../src/store/types.js';
import { TestClock } from '../helpers/clock.js';
import { claimJobs, completeIfHeld, extendLease, failIfHeld, releaseIfHeld } from '../helpers/fenced-writes.js';

const LEASE_MS = 30_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const OWNER_A = 'host-a/child-1';
const OWNER_B = 'host-a/child-2';

export const SWEEP: Omit<RecoverParams, 'retryDelay'> = {
  errorCode: 'LEASE:EXPIRED',
  errorDetail: 'lease expired',
  event: 'RECOVERED',
  actor: 'sweeper',
};
const fixedDelay = (ms: number) => () => ms;

/**
 * The contract every Store driver must keep. A driver's test file calls this
 * with a factory that opens a fresh, empty, migrated store per test.
 */
export function storeConformance(driverName: string, openStore: (clock: TestClock) => Promise<Store>): void {
  describe(`Store conformance: ${driverName}`, () => {
    let clock: TestClock;
    let store: Store;
    let queue: Queue;

    beforeEach(async () => {
      clock = new TestClock();
      store = await openStore(clock);
      queue = new Queue(store, { clock });
    });
    afterEach(async () => {
      await store.close();
    });

    const enqueue = async (request: Partial<EnqueueRequest> = {}) =>
      (await queue.enqueue({ class: 'email', payload: { n: 1 }, ...request })).id;
    const claimOne = async (owner = OWNER_A, classes = ['email']): Promise<ClaimedJob> => {
      const [job] = await claimJobs(store, { classes, ownerId: owner, limit: 1, leaseMs: LEASE_MS });
      if (job === undefined) throw new Error('expected a job to claim');
      return job;
    };
    const eventsOf = async (id: number) => (await store.eventList({ jobId: id })).map((e) => e.event);

    describe('enqueue', () => {
      it('stores a queued job with its defaults and an ENQUEUED event', async () => {
        const id = await enqueue({ payload: { to: 'a@b' } });
        const job = await store.jobGet({ id });
        expect(job).toMatchObject({ id, class: 'email', status: 'QUEUED', priority: 0, attempts: 0, max_retries: 5 });
        expect(JSON.parse(job!.payload)).toEqual({ to: 'a@b' });
        expect(job!.run_at).toBe(clock.now());
        expect(await eventsOf(id)).toEqual(['ENQUEUED']);
      });

      it('returns the existing id for a duplicate idempotency key within a class, a new one in another class', async () => {
        const first = await queue.enqueue({ class: 'email', key: 'order-7' });
        const again = await queue.enqueue({ class: 'email', key: 'order-7', payload: { other: true } });
        const elsewhere = await queue.enqueue({ class: 'sms', key: 'order-7' });
        expect(first.created).toBe(true);
        expect(again).toEqual({ id: first.id, created: false });
        expect(elsewhere.created).toBe(true);
        expect(elsewhere.id).not.toBe(first.id);
      });

      it('inserts a bulk batch in one transaction: all or nothing', async () => {
        const ids = await queue.enqueueMany([{ class: 'email' }, { class: 'email', priority: 3 }, { class: 'sms' }]);
        expect(ids.map((x) => x.created)).toEqual([true, true, true]);
        await expect(queue.enqueueMany([{ class: 'email' }, { class: 'email', delay: -1 }])).rejects.toThrow(/job 2: delay/);
        expect(await store.jobList({ limit: 100 })).toHaveLength(3);
      });

      it.each<[string, EnqueueRequest, RegExp]>([
        ['a payload that is not JSON-serialisable', { class: 'email', payload: { f: () => 1 } }, /not JSON-serialisable/],
        ['a payload with a BigInt', { class: 'email', payload: { n: 1n } }, /not JSON-serialisable/],
        ['a payload with NaN', { class: 'email', payload: { n: Number.NaN } }, /not JSON-serialisable/],
        ['a payload over the cap', { class: 'email', payload: 'x'.repeat(1024 * 1024 + 1) }, /over the 1048576-byte limit/],
        ['an empty class name', { class: '' }, /class must be a non-empty string/],
        ['a negative delay', { class: 'email', delay: -5 }, /delay must be a number of seconds >= 0/],
        ['a fractional max_retries', { class: 'email', maxRetries: 1.5 }, /max_retries/],
      ])('rejects %s with a typed error and writes nothing', async (_label, request, message) => {
        const attempt = queue.enqueue(request);
        await expect(attempt).rejects.toBeInstanceOf(InvalidInputError);
        await expect(attempt).rejects.toThrow(message);
        expect(await store.jobList({ limit: 10 })).toEqual([]);
      });

      it('rejects a cyclic payload', () => {
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        expect(() => prepareJob({ class: 'email', payload: cyclic }, clock)).toThrow(InvalidInputError);
      });
    });

    describe('claim', () => {
      it('claims only the given classes, only due jobs, priority first then FIFO', async () => {
        const low = await enqueue({ priority: 0 });
        const high = await enqueue({ priority: 10 });
        const lowLater = await enqueue({ priority: 0 });
        const delayed = await enqueue({ priority: 100, delay: 60 });
        await enqueue({ class: 'sms', priority: 1000 });

        const claimed = await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 10, leaseMs: LEASE_MS });
        expect(claimed.map((j) => j.id)).toEqual([high, low, lowLater]);

        clock.advance(60_000);
        const [later] = await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 10, leaseMs: LEASE_MS });
        expect(later?.id).toBe(delayed);
      });

      it('orders by run_at then id within a priority', async () => {
        const b = await enqueue({ delay: 2 });
        const a = await enqueue({ delay: 1 });
        clock.advance(5_000);
        const claimed = await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 2, leaseMs: LEASE_MS });
        expect(claimed.map((j) => j.id)).toEqual([a, b]);
      });

      it('claims across several classes', async () => {
        await enqueue({ class: 'email' });
        await enqueue({ class: 'sms' });
        await enqueue({ class: 'push' });
        const claimed = await claimJobs(store, { classes: ['email', 'sms'], ownerId: OWNER_A, limit: 10, leaseMs: LEASE_MS });
        expect(claimed.map((j) => j.class).sort()).toEqual(['email', 'sms']);
      });

      it('gives each claim a fresh token and an attempt row; its event waits for the start, which carries it', async () => {
        await enqueue();
        await enqueue();
        const [a, b] = await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 2, leaseMs: LEASE_MS });
        expect(a!.leaseToken).toMatch(/^[0-9a-f]{32}$/);
        expect(a!.leaseToken).not.toBe(b!.leaseToken);
        expect(a!.attempt).toBe(1);
        expect(a!.leaseExpiresAt).toBe(clock.now() + LEASE_MS);
        const job = await store.jobGet({ id: a!.id });
        expect(job).toMatchObject({ status: 'CLAIMED', owner_id: OWNER_A, lease_token: a!.leaseToken, attempts: 1 });
        const attempts = await store.attemptList({ jobId: a!.id });
        expect(attempts).toMatchObject([{ attempt: 1, owner_id: OWNER_A, lease_token: a!.leaseToken, status: 'RUNNING' }]);
        expect(await eventsOf(a!.id)).toEqual(['ENQUEUED']);
        expect(await claimJobs(store, { classes: ['email'], ownerId: OWNER_B, limit: 5, leaseMs: LEASE_MS })).toEqual([]);
        const claimedAt = clock.now();
        clock.advance(7);
        await store.jobStart({ id: a!.id, leaseToken: a!.leaseToken, leaseMs: LEASE_MS });
        const started = (await store.eventList({ jobId: a!.id }))[1]!;
        expect(started).toMatchObject({ event: 'STARTED', ts: claimedAt + 7 });
        expect(JSON.parse(started.detail!)).toEqual({ attempt: 1, owner_id: OWNER_A, claimed_at: claimedAt });
      });
    });

    describe('the lease holder', () => {
      it('starts, heartbeats, reports progress and completes once', async () => {
        const id = await enqueue();
        const job = await claimOne();
        await store.jobStart({ id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
        clock.advance(10_000);
        const beat = await extendLease(store, { id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
        expect(beat).toEqual({ leaseExpiresAt: clock.now() + LEASE_MS, cancelRequested: false });
        await store.jobProgress({ id, leaseToken: job.leaseToken, progress: '{"done":50}' });
        await completeIfHeld(store, { id, leaseToken: job.leaseToken, result: '{"ok":true}' });

        const row = await store.jobGet({ id });
        expect(row).toMatchObject({ status: 'SUCCEEDED', result: '{"ok":true}', progress: '{"done":50}', finished_at: clock.now() });
        // owner and token stay: they say who finished it
        expect(row).toMatchObject({ owner_id: OWNER_A, lease_token: job.leaseToken });
        expect(await store.attemptList({ jobId: id })).toMatchObject([{ attempt: 1, status: 'SUCCEEDED', finished_at: clock.now() }]);
        expect(await eventsOf(id)).toEqual(['ENQUEUED', 'STARTED', 'SUCCEEDED']);
        await expect(completeIfHeld(store, { id, leaseToken: job.leaseToken, result: null })).rejects.toBeInstanceOf(LeaseLostError);
      });

      it('retries a failure with the delay given, then dead-letters it when retries are spent', async () => {
        const id = await enqueue({ maxRetries: 1 });
        const first = await claimOne();
        await store.jobStart({ id, leaseToken: first.leaseToken, leaseMs: LEASE_MS });
        const error = { code: 'UPSTREAM:DOWN', detail: 'smtp 421', retryable: true };
        const outcome = await failIfHeld(store, { id, leaseToken: first.leaseToken, error, retryDelayMs: 4_000 });
        expect(outcome).toEqual({ status: 'QUEUED', runAt: clock.now() + 4_000 });
        expect(await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 1, leaseMs: LEASE_MS })).toEqual([]);

        clock.advance(4_000);
        const second = await claimOne(OWNER_B);
        expect(second.attempt).toBe(2);
        await store.jobStart({ id, leaseToken: second.leaseToken, leaseMs: LEASE_MS });
        const final = await failIfHeld(store, { id, leaseToken: second.leaseToken, error, retryDelayMs: 4_000 });
        expect(final).toEqual({ status: 'FAILED' });

        const row = await store.jobGet({ id });
        expect(row).toMatchObject({ status: 'FAILED', attempts: 2, error_code: 'UPSTREAM:DOWN', error_detail: 'smtp 421' });
        expect(await store.attemptList({ jobId: id })).toMatchObject([
          { attempt: 1, status: 'FAILED', error_code: 'UPSTREAM:DOWN', owner_id: OWNER_A },
          { attempt: 2, status: 'FAILED', error_code: 'UPSTREAM:DOWN', owner_id: OWNER_B },
        ]);
        expect(await eventsOf(id)).toEqual(['ENQUEUED', 'STARTED', 'RETRY_SCHEDULED', 'STARTED', 'FAILED']);
      });

      it('sends a non-retryable error straight to FAILED', async () => {
        const id = await enqueue({ maxRetries: 5 });
        const job = await claimOne();
        const error = { code: 'INVALID_INPUT:ADDRESS', detail: 'no @', retryable: false };
        expect(await failIfHeld(store, { id, leaseToken: job.leaseToken, error, retryDelayMs: 1 })).toEqual({ status: 'FAILED' });
      });

      it('releases a held job without spending a retry', async () => {
        const id = await enqueue({ maxRetries: 0 });
        const job = await claimOne();
        await store.jobStart({ id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
        await releaseIfHeld(store, { id, leaseToken: job.leaseToken, reason: 'shutdown' });
        expect(await store.jobGet({ id })).toMatchObject({ status: 'QUEUED', attempts: 1, releases: 1 });

        const again = await claimOne();
        expect(again.attempt).toBe(2);
        const error = { code: 'X:Y', detail: 'boom', retryable: true };
        // max_retries 0: this is the one real run, so a failure is final
        expect(await failIfHeld(store, { id, leaseToken: again.leaseToken, error, retryDelayMs: 1 })).toEqual({ status: 'FAILED' });
        expect((await store.attemptList({ jobId: id })).map((a) => [a.attempt, a.status, a.error_code])).toEqual([
          [1, 'CANCELLED', 'LEASE:RELEASED'],
          [2, 'FAILED', 'X:Y'],
        ]);
      });
    });

    describe('the batched hot path', () => {
      it('settles several outcomes and claims the next batch in one call, stamping lazy starts', async () => {
        const ids = [await enqueue(), await enqueue({ maxRetries: 0 }), await enqueue(), await enqueue(), await enqueue()];
        const batch = await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 3, leaseMs: LEASE_MS });
        expect(batch.map((j) => j.id)).toEqual(ids.slice(0, 3));
        expect(await store.jobGet({ id: ids[0]! })).toMatchObject({ status: 'CLAIMED', started_at: null });
        const startedAt = clock.now() + 5;
        clock.advance(50);
        const [first, second, third] = batch as [ClaimedJob, ClaimedJob, ClaimedJob];
        const { settled, claimed } = await store.jobsSettle({
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
          claim: { classes: ['email'], ownerId: OWNER_A, limit: 10, leaseMs: LEASE_MS },
        });
        expect(settled).toEqual([
          { id: first.id, held: true, status: 'SUCCEEDED', runAt: null },
          { id: second.id, held: true, status: 'FAILED', runAt: null },
          { id: third.id, held: false },
        ]);
        expect(claimed.map((j) => j.id)).toEqual(ids.slice(3));
        expect(await store.jobGet({ id: first.id })).toMatchObject({ status: 'SUCCEEDED', started_at: startedAt, result: '1' });
        const timeline = await store.eventList({ jobId: first.id });
        expect(timeline.map((e) => [e.event, e.ts])).toEqual([
          ['ENQUEUED', startedAt - 5],
          ['STARTED', startedAt],
          ['SUCCEEDED', clock.now()],
        ]);
        expect(JSON.parse(timeline[1]!.detail!)).toEqual({ attempt: 1, owner_id: OWNER_A, claimed_at: startedAt - 5 });
        expect((await store.eventList({ jobId: third.id })).map((e) => e.event)).toEqual(['ENQUEUED', 'ZOMBIE_WRITE_REJECTED']);
        expect(await store.jobGet({ id: third.id })).toMatchObject({ status: 'CLAIMED', lease_token: third.leaseToken });
      });

      it('writes every success of a batch, each with its own result, start and attempt end', async () => {
        const ids = [await enqueue(), await enqueue(), await enqueue()];
        const batch = await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 3, leaseMs: LEASE_MS });
        const startedAt = clock.now() + 1;
        clock.advance(20);
        const { settled } = await store.jobsSettle({
          settlements: batch.map((job, i) => ({ id: job.id, leaseToken: job.leaseToken, startedAt: startedAt + i, verdict: { type: 'complete' as const, result: i === 1 ? null : `{"n":${i}}` } })),
        });
        expect(settled.map((s) => [s.id, s.held])).toEqual(ids.map((id) => [id, true]));
        for (const [i, id] of ids.entries()) {
          expect(await store.jobGet({ id })).toMatchObject({ status: 'SUCCEEDED', result: i === 1 ? null : `{"n":${i}}`, started_at: startedAt + i, finished_at: clock.now() });
          expect((await store.attemptList({ jobId: id })).map((a) => [a.attempt, a.status, a.finished_at])).toEqual([[1, 'SUCCEEDED', clock.now()]]);
        }
      });

      it('does not restamp a start that was already written', async () => {
        const id = await enqueue();
        const job = await claimOne();
        await store.jobStart({ id, leaseToken: job.leaseToken, leaseMs: LEASE_MS, startedAt: clock.now() + 1 });
        clock.advance(100);
        await store.jobsSettle({ settlements: [{ id, leaseToken: job.leaseToken, startedAt: clock.now(), verdict: { type: 'complete', result: null } }] });
        expect(await store.jobGet({ id })).toMatchObject({ started_at: clock.now() - 99 });
        expect((await eventsOf(id)).filter((e) => e === 'STARTED')).toHaveLength(1);
      });

      it('renews every lease a worker holds in one heartbeat and reports lost ones', async () => {
        await enqueue();
        await enqueue();
        const [a, b] = await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 2, leaseMs: LEASE_MS });
        await store.jobCancel({ id: b!.id, actor: 'operator' });
        clock.advance(1_000);
        const statuses = await store.leasesExtend({
          leases: [a!, b!, { id: a!.id, leaseToken: 'f'.repeat(32) }].map((j) => ({ id: j.id, leaseToken: j.leaseToken })),
          leaseMs: LEASE_MS,
        });
        expect(statuses).toEqual([
          { id: a!.id, held: true, leaseExpiresAt: clock.now() + LEASE_MS, cancelRequested: false },
          { id: b!.id, held: true, leaseExpiresAt: clock.now() + LEASE_MS, cancelRequested: true },
          { id: a!.id, held: false },
        ]);
      });

      it('counts a claim as a start: taking back what an owner held spends a retry, unless a culprit is named', async () => {
        const culprit = await enqueue({ maxRetries: 0 });
        const victim = await enqueue({ maxRetries: 0 });
        await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 2, leaseMs: LEASE_MS });
        const crash = { errorCode: 'WORKER:CRASHED', errorDetail: 'child exited with code 1', event: 'RECOVERED' as const, actor: 'supervisor', retryDelay: fixedDelay(0) };
        const named = await store.leasesRecoverByOwner({ ...crash, ownerId: OWNER_A, culpritJobId: culprit });
        expect(named.map((r) => [r.id, r.status, r.released]).sort()).toEqual([
          [culprit, 'FAILED', false],
          [victim, 'QUEUED', true],
        ]);
        expect(await store.attemptList({ jobId: victim })).toMatchObject([{ status: 'CANCELLED', error_code: 'LEASE:RELEASED', error_detail: `victim of job ${culprit} (WORKER:CRASHED)` }]);

        await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 1, leaseMs: LEASE_MS });
        const unnamed = await store.leasesRecoverByOwner({ ...crash, ownerId: OWNER_A });
        expect(unnamed).toMatchObject([{ id: victim, status: 'FAILED', released: false }]);
      });
    });

    describe('fencing', () => {
      it('rejects every write of a holder whose lease was taken back and given to another', async () => {
        const id = await enqueue();
        const zombie = await claimOne(OWNER_A);
        await store.jobStart({ id, leaseToken: zombie.leaseToken, leaseMs: LEASE_MS });
        clock.advance(LEASE_MS + 1);
        const recovered = await store.leasesRecoverExpired({ ...SWEEP, retryDelay: fixedDelay(0), limit: 10 });
        expect(recovered).toMatchObject([{ id, status: 'QUEUED', ownerId: OWNER_A }]);
        const holder = await claimOne(OWNER_B);
        await store.jobStart({ id, leaseToken: holder.leaseToken, leaseMs: LEASE_MS });
        const before = { job: await store.jobGet({ id }), attempts: await store.attemptList({ jobId: id }) };

        const stale = { id, leaseToken: zombie.leaseToken };
        const writes: [string, () => Promise<unknown>][] = [
          ['heartbeat', () => extendLease(store, { ...stale, leaseMs: LEASE_MS })],
          ['progress', () => store.jobProgress({ ...stale, progress: '99' })],
          ['complete', () => completeIfHeld(store, { ...stale, result: '"zombie"' })],
          ['fail', () => failIfHeld(store, { ...stale, error: { code: 'Z:Z', detail: 'z', retryable: true }, retryDelayMs: 0 })],
          ['start', () => store.jobStart({ ...stale, leaseMs: LEASE_MS })],
          ['release', () => releaseIfHeld(store, { ...stale, reason: 'zombie' })],
        ];
        for (const [name, write] of writes) {
          await expect(write(), name).rejects.toBeInstanceOf(LeaseLostError);
        }
        expect(await store.jobGet({ id })).toEqual(before.job);
        expect(await store.attemptList({ jobId: id })).toEqual(before.attempts);
        const rejected = (await store.eventList({ jobId: id })).filter((e) => e.event === 'ZOMBIE_WRITE_REJECTED');
        expect(rejected.map((e) => JSON.parse(e.detail!).op)).toEqual(['heartbeat', 'progress', 'complete', 'fail', 'start', 'release']);

        await completeIfHeld(store, { id, leaseToken: holder.leaseToken, result: '"real"' });
        expect(await store.jobGet({ id })).toMatchObject({ status: 'SUCCEEDED', result: '"real"', lease_token: holder.leaseToken });
        expect((await store.attemptList({ jobId: id })).map((a) => a.status)).toEqual(['FAILED', 'SUCCEEDED']);
      });

      it('rejects a write with a made-up token and writes no event for a job that does not exist', async () => {
        const id = await enqueue();
        await claimOne();
        await expect(store.jobProgress({ id, leaseToken: 'f'.repeat(32), progress: '1' })).rejects.toBeInstanceOf(LeaseLostError);
        await expect(store.jobProgress({ id: 999_999, leaseToken: 'f'.repeat(32), progress: '1' })).rejects.toBeInstanceOf(LeaseLostError);
      });
    });

    describe('the sweeper', () => {
      const retryDelay = fixedDelay(2_000);

      it('takes back expired leases with backoff, leaves renewed ones alone, and respects the batch limit', async () => {
        for (let i = 0; i < 5; i++) await enqueue();
        const jobs = await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 5, leaseMs: LEASE_MS });
        for (const job of jobs) await store.jobStart({ id: job.id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
        const renewed = jobs[4]!;
        clock.advance(LEASE_MS - 1_000);
        await extendLease(store, { id: renewed.id, leaseToken: renewed.leaseToken, leaseMs: LEASE_MS });
        clock.advance(2_000);

        const firstPass = await store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 3 });
        expect(firstPass).toHaveLength(3);
        const secondPass = await store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 3 });
        expect(secondPass).toHaveLength(1);
        expect(await store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 3 })).toEqual([]);

        const taken = [...firstPass, ...secondPass].map((r) => r.id).sort((a, b) => a - b);
        expect(taken).toEqual(jobs.slice(0, 4).map((j) => j.id));
        for (const { id } of jobs.slice(0, 4)) {
          expect(await store.jobGet({ id })).toMatchObject({ status: 'QUEUED', run_at: clock.now() + 2_000, error_code: 'LEASE:EXPIRED' });
          expect(await store.attemptList({ jobId: id })).toMatchObject([{ status: 'FAILED', error_code: 'LEASE:EXPIRED' }]);
          expect(await eventsOf(id)).toEqual(['ENQUEUED', 'STARTED', 'RECOVERED', 'RETRY_SCHEDULED']);
        }
        expect(await store.jobGet({ id: renewed.id })).toMatchObject({ status: 'RUNNING', lease_token: renewed.leaseToken });
      });

      it('two sweepers at once never take back the same job twice', async () => {
        const ids = (await queue.enqueueMany(Array.from({ length: 60 }, (_, n) => ({ class: 'email', payload: { n } })))).map((j) => j.id);
        const jobs = await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 60, leaseMs: LEASE_MS });
        for (const job of jobs.slice(0, 30)) await store.jobStart({ id: job.id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
        clock.advance(LEASE_MS + 1);
        const sweepUntilDry = async () => {
          const taken: number[] = [];
          for (;;) {
            const batch = await store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 2 });
            if (batch.length === 0) return taken;
            taken.push(...batch.map((r) => r.id));
          }
        };
        const passes = await Promise.all([sweepUntilDry(), sweepUntilDry(), sweepUntilDry()]);
        const taken = passes.flat();
        expect(new Set(taken).size).toBe(taken.length);
        expect(taken.sort((a, b) => a - b)).toEqual(ids);
        for (const id of ids) {
          expect(await store.attemptList({ jobId: id })).toHaveLength(1);
          const timeline = await eventsOf(id);
          expect(timeline.filter((e) => e === 'RECOVERED' || e === 'RELEASED')).toHaveLength(1);
          expect(await store.jobGet({ id })).toMatchObject({ status: 'QUEUED', attempts: 1 });
        }
      });

      it('a late holder racing the sweeper: exactly one of them wins each job', async () => {
        await queue.enqueueMany(Array.from({ length: 40 }, (_, n) => ({ class: 'email', payload: { n } })));
        const jobs = await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 40, leaseMs: LEASE_MS });
        for (const job of jobs) await store.jobStart({ id: job.id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
        clock.advance(LEASE_MS + 1);
        const settle = (batch: ClaimedJob[]) =>
          store.jobsSettle({
            settlements: batch.map((j) => ({ id: j.id, leaseToken: j.leaseToken, startedAt: null, verdict: { type: 'complete' as const, result: '1' } })),
          });
        const sweep = async () => {
          const taken: number[] = [];
          for (let batch = await store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 3 }); batch.length > 0; ) {
            taken.push(...batch.map((r) => r.id));
            batch = await store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 3 });
          }
          return taken;
        };
        // jobs settled from both ends while the sweeper walks them: on a server the two really interleave
        const settling = [jobs.slice(0, 5), jobs.slice(35), jobs.slice(5, 20), jobs.slice(20, 35)].map(settle);
        const [recovered, ...settledBatches] = await Promise.all([sweep(), ...settling]);
        const won = new Set(settledBatches.flatMap((b) => b.settled).filter((s) => s.held).map((s) => s.id));
        const taken = new Set(recovered);
        for (const { id } of jobs) {
          expect(won.has(id) !== taken.has(id), `job ${id}: exactly one winner`).toBe(true);
          const row = await store.jobGet({ id });
          expect(row?.status).toBe(won.has(id) ? 'SUCCEEDED' : 'QUEUED');
          expect((await store.attemptList({ jobId: id })).map((a) => a.status)).toEqual([won.has(id) ? 'SUCCEEDED' : 'FAILED']);
          expect((await eventsOf(id)).filter((e) => e === 'ZOMBIE_WRITE_REJECTED')).toHaveLength(won.has(id) ? 0 : 1);
        }
      });

      it('dead-letters a job whose last retry expired', async () => {
        const id = await enqueue({ maxRetries: 0 });
        const job = await claimOne();
        await store.jobStart({ id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
        clock.advance(LEASE_MS + 1);
        expect(await store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 10 })).toMatchObject([{ id, status: 'FAILED' }]);
        expect(await store.jobGet({ id })).toMatchObject({ status: 'FAILED', error_code: 'LEASE:EXPIRED', finished_at: clock.now() });
        expect(await eventsOf(id)).toEqual(['ENQUEUED', 'STARTED', 'RECOVERED', 'FAILED']);
      });

      it('counts a claimed job whose start was never written: only its holder can prove it never began', async () => {
        const id = await enqueue({ maxRetries: 0 });
        const claimedAt = clock.now();
        await claimOne();
        clock.advance(LEASE_MS + 1);
        expect(await store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 10 })).toMatchObject([{ id, status: 'FAILED', released: false }]);
        expect(await store.jobGet({ id })).toMatchObject({ status: 'FAILED', error_code: 'LEASE:EXPIRED', releases: 0 });
        // the claim wrote no event; the take-back writes it, stamped when the claim was made
        const timeline = await store.eventList({ jobId: id });
        expect(timeline.map((e) => [e.event, e.ts, e.actor])).toEqual([
          ['ENQUEUED', claimedAt, expect.any(String)],
          ['CLAIMED', claimedAt, OWNER_A],
          ['RECOVERED', clock.now(), SWEEP.actor],
          ['FAILED', clock.now(), SWEEP.actor],
        ]);
      });

      it('puts a handed-back job back in its place in the queue, not behind the jobs enqueued since', async () => {
        const first = await enqueue();
        const job = await claimOne();
        clock.advance(1_000);
        const later = await enqueue();
        await releaseIfHeld(store, { id: job.id, leaseToken: job.leaseToken, reason: 'shutdown' });
        expect(await eventsOf(first)).toEqual(['ENQUEUED', 'CLAIMED', 'RELEASED']);
        const next = await claimJobs(store, { classes: ['email'], ownerId: OWNER_B, limit: 2, leaseMs: LEASE_MS });
        expect(next.map((j) => j.id)).toEqual([first, later]);
      });

      it('lists what one owner holds, with its lease data', async () => {
        await enqueue();
        await enqueue();
        const [job] = await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 1, leaseMs: LEASE_MS });
        await store.jobStart({ id: job!.id, leaseToken: job!.leaseToken, leaseMs: LEASE_MS });
        const held = await store.jobListHeldBy({ ownerId: OWNER_A });
        expect(held).toMatchObject([{ id: job!.id, status: 'RUNNING', started_at: clock.now(), heartbeat_at: clock.now() }]);
        expect(await store.jobListHeldBy({ ownerId: OWNER_B })).toEqual([]);
      });

      it('fails a poison job for good when told it is not retryable', async () => {
        const id = await enqueue({ maxRetries: 5 });
        const job = await claimOne();
        await store.jobStart({ id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
        const recovered = await store.leasesRecoverByOwner({
          ownerId: OWNER_A,
          errorCode: 'WORKER:POISON',
          errorDetail: 'killed its child 3 times in a row',
          event: 'KILLED',
          actor: 'supervisor',
          retryDelay,
          retryable: false,
        });
        expect(recovered).toMatchObject([{ id, status: 'FAILED' }]);
        expect(await store.jobGet({ id })).toMatchObject({ status: 'FAILED', error_code: 'WORKER:POISON' });
      });

      it('takes back everything one owner held, at once', async () => {
        for (let i = 0; i < 3; i++) await enqueue();
        const mine = await claimJobs(store, { classes: ['email'], ownerId: OWNER_A, limit: 2, leaseMs: LEASE_MS });
        const theirs = await claimOne(OWNER_B);
        await store.jobStart({ id: mine[0]!.id, leaseToken: mine[0]!.leaseToken, leaseMs: LEASE_MS });
        const recovered = await store.leasesRecoverByOwner({
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
        expect(await store.attemptList({ jobId: mine[0]!.id })).toMatchObject([{ status: 'FAILED', error_code: 'WORKER:CRASHED' }]);
        expect(await store.jobGet({ id: theirs.id })).toMatchObject({ status: 'CLAIMED', owner_id: OWNER_B });
      });

      it('cancels instead of requeueing a job whose cancel was requested', async () => {
        const id = await enqueue();
        const job = await claimOne();
        await store.jobStart({ id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
        expect(await store.jobCancel({ id, actor: 'operator' })).toBe('cancel_requested');
        clock.advance(LEASE_MS + 1);
        expect(await store.leasesRecoverExpired({ ...SWEEP, retryDelay, limit: 10 })).toMatchObject([{ id, status: 'CANCELLED' }]);
      });
    });

    describe('operators', () => {
      it('cancels a queued job at once and a running one through its next heartbeat', async () => {
        const queued = await enqueue();
        const running = await enqueue();
        expect(await store.jobCancel({ id: queued, actor: 'operator' })).toBe('cancelled');
        expect(await store.jobGet({ id: queued })).toMatchObject({ status: 'CANCELLED', finished_at: clock.now() });

        const job = await claimOne();
        expect(job.id).toBe(running);
        await store.jobStart({ id: running, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
        expect(await store.jobCancel({ id: running, actor: 'operator' })).toBe('cancel_requested');
        expect(await store.jobCancel({ id: running, actor: 'operator' })).toBe('already_requested');
        const beat = await extendLease(store, { id: running, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
        expect(beat.cancelRequested).toBe(true);
        const aborted = { code: 'CANCELLED:BY_OPERATOR', detail: 'aborted', retryable: true };
        expect(await failIfHeld(store, { id: running, leaseToken: job.leaseToken, error: aborted, retryDelayMs: 1 })).toEqual({
          status: 'CANCELLED',
        });
        expect(await store.attemptList({ jobId: running })).toMatchObject([{ status: 'CANCELLED' }]);
        expect(await store.jobCancel({ id: running, actor: 'operator' })).toBe('terminal');
        expect(await store.jobCancel({ id: 424242, actor: 'operator' })).toBe('not_found');
      });

      it('retries one FAILED job, or all of a class', async () => {
        const ids = [await enqueue({ maxRetries: 0 }), await enqueue({ maxRetries: 0 }), await enqueue({ class: 'sms', maxRetries: 0 })];
        const error = { code: 'X:Y', detail: 'no', retryable: true };
        for (const cls of ['email', 'email', 'sms']) {
          const job = await claimOne(OWNER_A, [cls]);
          await failIfHeld(store, { id: job.id, leaseToken: job.leaseToken, error, retryDelayMs: 0 });
        }
        expect(await store.jobRetry({ id: ids[0]!, actor: 'operator' })).toBe('queued');
        expect(await store.jobRetry({ id: ids[0]!, actor: 'operator' })).toBe('not_failed');
        expect(await store.jobRetry({ id: 424242, actor: 'operator' })).toBe('not_found');
        expect(await store.jobRetryFailed({ class: 'email', actor: 'operator' })).toBe(1);
        expect(await store.jobRetryFailed({ actor: 'operator' })).toBe(1);
        const again = await claimOne(OWNER_A, ['email']);
        expect(again.attempt).toBe(2);
        // the manual retry grants exactly one more run
        expect(await failIfHeld(store, { id: again.id, leaseToken: again.leaseToken, error, retryDelayMs: 0 })).toEqual({ status: 'FAILED' });
      });

      it('deletes a job together with its attempts and events', async () => {
        const id = await enqueue();
        const job = await claimOne();
        await completeIfHeld(store, { id, leaseToken: job.leaseToken, result: null });
        const prune = { status: 'SUCCEEDED' as const, finishedBefore: clock.now() + 1, limit: 10 };
        expect(await store.jobsPruneBatch(prune)).toBe(1);
        expect(await store.jobGet({ id })).toBeUndefined();
        expect(await store.attemptList({ jobId: id })).toEqual([]);
        expect(await store.eventList({ jobId: id })).toEqual([]);
        expect(await store.jobsPruneBatch(prune)).toBe(0);
      });

      it('lists newest first with filters', async () => {
        const a = await enqueue();
        const b = await enqueue({ class: 'sms' });
        const c = await enqueue();
        await store.jobCancel({ id: c, actor: 'operator' });
        expect((await store.jobList({ limit: 10 })).map((j) => j.id)).toEqual([c, b, a]);
        expect((await store.jobList({ limit: 10, class: 'email' })).map((j) => j.id)).toEqual([c, a]);
        expect((await store.jobList({ limit: 10, status: 'QUEUED' })).map((j) => j.id)).toEqual([b, a]);
        expect((await store.jobList({ limit: 10, status: 'QUEUED', class: 'email' })).map((j) => j.id)).toEqual([a]);
        expect((await store.jobList({ limit: 1 })).map((j) => j.id)).toEqual([c]);
      });
    });

    describe('operator statements: the answers', () => {
      const claimFrom = async (cls: string, owner: string) => {
        const [job] = await claimJobs(store, { classes: [cls], ownerId: owner, limit: 1, leaseMs: 30_000 });
        if (job === undefined) throw new Error(`nothing to claim in ${cls}`);
        return job;
      };
      const failOne = async (cls: string, code: string) => {
        const job = await claimFrom(cls, 'w');
        return failIfHeld(store, { id: job.id, leaseToken: job.leaseToken, error: { code, detail: 'd', retryable: true }, retryDelayMs: 0 });
      };

      it('counts, retries, errors (overall and per class, in a window), throughput and in-flight jobs', async () => {
        const T0 = clock.now();
        await queue.enqueueMany([
          { class: 'a', maxRetries: 2 },
          { class: 'a', maxRetries: 0 },
          { class: 'b', maxRetries: 1 },
          { class: 'b', maxRetries: 0 },
          { class: 'c' },
        ]);
        // An old failure, outside a 1-hour window.
        await failOne('a', 'OLD:ERROR'); // job 1: attempt 1 fails, requeued
        clock.advance(2 * HOUR);
        await failOne('a', 'NET:DOWN'); // job 2 (max 0): FAILED
        await failOne('a', 'NET:DOWN'); // job 1: attempt 2 fails, requeued
        const a1 = await claimFrom('a', 'w'); // job 1: attempt 3 succeeds
        await completeIfHeld(store, { id: a1.id, leaseToken: a1.leaseToken, result: null });
        await failOne('b', 'NET:DOWN'); // job 3: requeued
        await failOne('b', 'DISK:FULL'); // job 4 (max 0): FAILED
        clock.advance(120_000);
        const b3 = await claimFrom('b', 'w'); // job 3, attempt 2: done
        await completeIfHeld(store, { id: b3.id, leaseToken: b3.leaseToken, result: null });

        expect(await store.statsCounts()).toEqual([
          { class: 'a', status: 'FAILED', count: 1 },
          { class: 'a', status: 'SUCCEEDED', count: 1 },
          { class: 'b', status: 'FAILED', count: 1 },
          { class: 'b', status: 'SUCCEEDED', count: 1 },
          { class: 'c', status: 'QUEUED', count: 1 },
        ]);
        expect(await store.statsRetries({ since: 0 })).toEqual([
          { class: 'a', status: 'FAILED', attempts: 1, jobs: 1 },
          { class: 'a', status: 'SUCCEEDED', attempts: 3, jobs: 1 },
          { class: 'b', status: 'FAILED', attempts: 1, jobs: 1 },
          { class: 'b', status: 'SUCCEEDED', attempts: 2, jobs: 1 },
        ]);
        const window = clock.now() - HOUR;
        expect(await store.statsTopErrors({ since: window, limit: 10 })).toEqual([
          { code: 'NET:DOWN', count: 3, last_at: T0 + 2 * HOUR },
          { code: 'DISK:FULL', count: 1, last_at: T0 + 2 * HOUR },
        ]);
        expect((await store.statsTopErrors({ since: 0, limit: 10 })).map((e) => e.code)).toEqual(['NET:DOWN', 'DISK:FULL', 'OLD:ERROR']);
        expect(await store.statsTopErrors({ since: 0, limit: 1 })).toHaveLength(1);
        expect(await store.statsTopErrorsByClass({ since: window, limit: 1 })).toEqual([
          { class: 'a', code: 'NET:DOWN', count: 2, last_at: T0 + 2 * HOUR },
          { class: 'b', code: 'DISK:FULL', count: 1, last_at: T0 + 2 * HOUR },
        ]);
        expect(await store.statsFinishedSince({ since: clock.now() - 60_000 })).toEqual([{ status: 'SUCCEEDED', count: 1 }]);
        expect(await store.statsFinishedSince({ since: 0 })).toEqual([
          { status: 'FAILED', count: 2 },
          { status: 'SUCCEEDED', count: 2 },
        ]);

        // In flight: held longest first, the owner's pid from the registry (null when unknown).
        await store.workerRegister({ id: 'child-1', kind: 'child', host: 'h', supervisorId: 's', pid: 4242, class: 'c', state: 'busy', restarts: 0 });
        await queue.enqueue({ class: 'c' });
        const first = await claimFrom('c', 'child-1');
        clock.advance(5_000);
        await store.jobStart({ id: first.id, leaseToken: first.leaseToken, leaseMs: 30_000 });
        const second = await claimFrom('c', 'unknown-owner');
        clock.advance(1_000);
        const rows = await store.statsInFlight({ limit: 10 });
        expect(rows.map((r) => [r.id, r.status, r.owner_id, r.pid])).toEqual([
          [first.id, 'RUNNING', 'child-1', 4242],
          [second.id, 'CLAIMED', 'unknown-owner', null],
        ]);
        expect(await store.statsInFlight({ limit: 1 })).toHaveLength(1);

        const report = await collectStats(store, {
          now: clock.now(),
          retention: { succeeded_days: 30, failed_days: 90, cancelled_days: 30, batch_size: 100, interval_seconds: 60 },
          windowMs: HOUR,
        });
        expect(report.in_flight[0]).toMatchObject({ id: first.id, pid: 4242, attempt: 1, held_ms: 6_000, runtime_ms: 1_000, heartbeat_age_ms: 1_000, lease_left_ms: 29_000 });
        expect(report.in_flight[1]).toMatchObject({ runtime_ms: null, held_ms: 1_000 });
        expect(report.jobs.total).toMatchObject({ QUEUED: 0, CLAIMED: 1, RUNNING: 1, SUCCEEDED: 2, FAILED: 2, total: 6 });
        expect(report.jobs.by_class.map((row) => row.class)).toEqual(['a', 'b', 'c']);
        expect(report.retries).toMatchObject({ finished: 4, retried: 2 });
        expect(report.throughput.last_hour).toMatchObject({ SUCCEEDED: 2, FAILED: 2, total: 4 });
        expect(report.errors.top.map((e) => e.code)).toEqual(['NET:DOWN', 'DISK:FULL']);
      });

      it('attempts handed back at shutdown are neither errors nor spent attempts', async () => {
        await queue.enqueue({ class: 'a' });
        const held = await claimFrom('a', 'w');
        await releaseIfHeld(store, { id: held.id, leaseToken: held.leaseToken, reason: 'shutdown' });
        const again = await claimFrom('a', 'w');
        await completeIfHeld(store, { id: again.id, leaseToken: again.leaseToken, result: null });
        expect(await store.statsTopErrors({ since: 0, limit: 10 })).toEqual([]);
        expect(await store.statsRetries({ since: 0 })).toEqual([{ class: 'a', status: 'SUCCEEDED', attempts: 1, jobs: 1 }]);
      });

      it('zombie writes are counted from the timeline', async () => {
        await queue.enqueue({ class: 'a' });
        const job = await claimFrom('a', 'w');
        expect(await store.statsZombieWrites()).toBe(0);
        await expect(extendLease(store, { id: job.id, leaseToken: 'stale', leaseMs: 1_000 })).rejects.toBeInstanceOf(LeaseLostError);
        await expect(completeIfHeld(store, { id: job.id, leaseToken: 'stale', result: null })).rejects.toBeInstanceOf(LeaseLostError);
        expect(await store.statsZombieWrites()).toBe(2);
      });

      it('prune: counts and deletes by status and age, in batches; a job retried meanwhile stays', async () => {
        await queue.enqueueMany(Array.from({ length: 5 }, () => ({ class: 'a', maxRetries: 0 })));
        for (let i = 0; i < 5; i++) {
          const job = await claimFrom('a', 'w');
          if (i < 3) await completeIfHeld(store, { id: job.id, leaseToken: job.leaseToken, result: null });
          else await failIfHeld(store, { id: job.id, leaseToken: job.leaseToken, error: { code: 'X:Y', detail: 'd', retryable: false }, retryDelayMs: 0 });
          clock.advance(DAY);
        }
        const now = clock.now();
        // SUCCEEDED at T0, T0+1d, T0+2d; FAILED at T0+3d, T0+4d; now = T0+5d
        expect(await store.jobsPruneCount({ status: 'SUCCEEDED', finishedBefore: now - 3 * DAY })).toBe(2);
        expect(await store.jobsPruneCount({ status: 'FAILED', finishedBefore: now })).toBe(2);
        expect(await store.jobRetry({ id: 4, actor: 'op' })).toBe('queued');
        expect(await store.jobsPruneCount({ status: 'FAILED', finishedBefore: now })).toBe(1);
        expect(await store.jobsPruneBatch({ status: 'SUCCEEDED', finishedBefore: now - 3 * DAY, limit: 1 })).toBe(1);
        expect(await store.jobGet({ id: 1 })).toBeUndefined();
        expect(await store.attemptList({ jobId: 1 })).toEqual([]);
        expect(await store.eventList({ jobId: 1 })).toEqual([]);
        expect(await store.jobsPruneBatch({ status: 'SUCCEEDED', finishedBefore: now - 3 * DAY, limit: 10 })).toBe(1);
        expect(await store.jobsPruneBatch({ status: 'SUCCEEDED', finishedBefore: now - 3 * DAY, limit: 10 })).toBe(0);
        expect(await store.jobsPruneBatch({ status: 'FAILED', finishedBefore: now, limit: 10 })).toBe(1);
        expect((await store.jobList({ limit: 10 })).map((job) => [job.id, job.status])).toEqual([
          [4, 'QUEUED'],
          [3, 'SUCCEEDED'],
        ]);
        const size = await store.databaseSize();
        expect(size.bytes).toBe(size.pageCount * size.pageSize);
        expect(size.pageCount).toBeGreaterThan(0);
        expect(await store.schemaVersion()).toBeGreaterThanOrEqual(2);
        await expect(store.ping()).resolves.toBeUndefined();
      });
    });

    describe('integrity', () => {
      it('finds nothing wrong with a database in use', async () => {
        await enqueue();
        const job = await claimOne();
        await completeIfHeld(store, { id: job.id, leaseToken: job.leaseToken, result: null });
        await enqueue();
        expect(await store.integrityCheck()).toEqual([]);
      });
    });

    describe('workers', () => {
      it('registers, heartbeats, exits and lists', async () => {
        const base = { host: 'h1', supervisorId: 'sup-1', restarts: 0 } as const;
        await store.workerRegister({ ...base, id: 'sup-1', kind: 'supervisor', supervisorId: null, pid: 10, class: null, state: 'ready' });
        await store.workerRegister({ ...base, id: 'child-1', kind: 'child', pid: 11, class: 'email', state: 'starting' });
        clock.advance(1_000);
        await store.workerHeartbeat({ id: 'child-1', state: 'busy', cpuPercent: 12.5, memoryBytes: 1024, jobId: 7 });
        await store.workerHeartbeat({ id: 'child-1' });
        const live = await store.workerListLiveOnHost({ host: 'h1' });
        expect(live.map((w) => w.id).sort()).toEqual(['child-1', 'sup-1']);
        expect(live.find((w) => w.id === 'child-1')).toMatchObject({
          state: 'busy',
          heartbeat_at: clock.now(),
          cpu_percent: 12.5,
          memory_bytes: 1024,
          job_id: 7,
        });
        await store.workerHeartbeat({ id: 'child-1', jobId: null });
        expect((await store.workerListLiveOnHost({ host: 'h1' })).find((w) => w.id === 'child-1')?.job_id).toBeNull();
        await store.workerExit({ id: 'child-1', state: 'exited', exitCode: null, exitSignal: 'SIGKILL' });
        expect((await store.workerListLiveOnHost({ host: 'h1' })).map((w) => w.id)).toEqual(['sup-1']);
        expect(await store.workerListLiveOnHost({ host: 'h2' })).toEqual([]);
        expect((await store.workerList({ includeExited: false, limit: 10 })).map((w) => w.id)).toEqual(['sup-1']);
        expect(await store.workerList({ includeExited: true, limit: 10 })).toHaveLength(2);
      });
    });
  });
}
