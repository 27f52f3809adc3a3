import { describe, expect, it } from 'vitest';
import { InvalidInputError, LeaseLostError } from '../../../src/errors.js';
import { prepareJob, type EnqueueRequest } from '../../../src/queue/enqueue.js';
import { claimJobs, completeIfHeld, extendLease, failIfHeld, releaseIfHeld } from '../../helpers/fenced-writes.js';
import { LEASE_MS, OWNER_A, OWNER_B, type Conformance } from './context.js';

/** Enqueue, claim, and the lease holder's writes. */
export function jobSuites(c: Conformance): void {
  const { enqueue, claimOne, eventsOf } = c;
  describe('enqueue', () => {
    it('get(): the job with its payload, result and progress parsed, its attempts, timeline and log lines', async () => {
      const id = await enqueue({ payload: { to: 'ada@example.com', n: [1, 2] } });
      const job = await c.claimOne();
      await c.store.jobProgress({ id, leaseToken: job.leaseToken, progress: JSON.stringify({ step: 2 }) });
      await c.store.jobsSettle({
        settlements: [
          {
            id,
            leaseToken: job.leaseToken,
            startedAt: null,
            verdict: { type: 'complete', result: JSON.stringify({ sent: true }) },
          },
        ],
      });
      const details = (await c.queue.get(id))!;
      expect(details.job).toMatchObject({
        id,
        status: 'SUCCEEDED',
        payload: { to: 'ada@example.com', n: [1, 2] },
        result: { sent: true },
        progress: { step: 2 },
      });
      expect(details.attempts.map((a) => a.status)).toEqual(['SUCCEEDED']);
      expect(details.logs).toEqual([]);
      expect(await c.queue.get(id + 1000)).toBeUndefined();
    });

    it('stores a queued job with its defaults and an ENQUEUED event', async () => {
      const id = await enqueue({ payload: { to: 'a@b' } });
      const job = await c.store.jobGet({ id });
      expect(job).toMatchObject({ id, class: 'email', status: 'QUEUED', priority: 0, attempts: 0, max_retries: 5 });
      expect(JSON.parse(job!.payload)).toEqual({ to: 'a@b' });
      expect(job!.run_at).toBe(c.clock.now());
      expect(await eventsOf(id)).toEqual(['ENQUEUED']);
    });

    it('returns the existing id for a duplicate idempotency key within a class, a new one in another class', async () => {
      const first = await c.queue.enqueue({ class: 'email', key: 'order-7' });
      const again = await c.queue.enqueue({ class: 'email', key: 'order-7', payload: { other: true } });
      const elsewhere = await c.queue.enqueue({ class: 'sms', key: 'order-7' });
      expect(first.created).toBe(true);
      expect(again).toEqual({ id: first.id, created: false });
      expect(elsewhere.created).toBe(true);
      expect(elsewhere.id).not.toBe(first.id);
    });

    it('inserts a bulk batch in one transaction: all or nothing', async () => {
      const ids = await c.queue.enqueueMany([{ class: 'email' }, { class: 'email', priority: 3 }, { class: 'sms' }]);
      expect(ids.map((x) => x.created)).toEqual([true, true, true]);
      await expect(c.queue.enqueueMany([{ class: 'email' }, { class: 'email', delay: -1 }])).rejects.toThrow(
        /job 2: delay/,
      );
      expect(await c.store.jobList({ limit: 100 })).toHaveLength(3);
    });

    it('gives each job of a bulk batch its own id, in the batch order, plain, keyed and dependent jobs mixed', async () => {
      const plain = (n: number): EnqueueRequest => ({ class: 'email', payload: { n } });
      // Past 64 rows (a statement's worth on SQLite), then a keyed job, a dependent of an earlier one, and plain again.
      const requests: EnqueueRequest[] = [
        ...Array.from({ length: 150 }, (_, n) => ({ ...plain(n), ...(n === 3 ? { ref: 'fourth' } : {}) })),
        { class: 'email', key: 'k-150', payload: { n: 150 } },
        { class: 'email', payload: { n: 151 }, dependsOn: ['fourth'] },
        ...Array.from({ length: 70 }, (_, i) => plain(152 + i)),
      ];
      const inserted = await c.queue.enqueueMany(requests);
      const ids = inserted.map((job) => job.id);
      expect(inserted.every((job) => job.created)).toBe(true);
      expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
      for (const [n, id] of ids.entries())
        expect(JSON.parse((await c.store.jobGet({ id }))!.payload), `job ${id}`).toEqual({ n });
      expect((await c.store.jobParents({ id: ids[151]! })).map((parent) => parent.id)).toEqual([ids[3]]);
      expect(await eventsOf(ids[200]!)).toEqual(['ENQUEUED']);
    });

    it.each<[string, EnqueueRequest, RegExp]>([
      ['a payload that is not JSON-serialisable', { class: 'email', payload: { f: () => 1 } }, /not JSON-serialisable/],
      ['a payload with a BigInt', { class: 'email', payload: { n: 1n } }, /not JSON-serialisable/],
      ['a payload with NaN', { class: 'email', payload: { n: Number.NaN } }, /not JSON-serialisable/],
      [
        'a payload over the cap',
        { class: 'email', payload: 'x'.repeat(1024 * 1024 + 1) },
        /over the 1048576-byte limit/,
      ],
      ['an empty class name', { class: '' }, /class must be a non-empty string/],
      ['a negative delay', { class: 'email', delay: -5 }, /delay must be a number of seconds >= 0/],
      ['a fractional max_retries', { class: 'email', maxRetries: 1.5 }, /max_retries/],
    ])('rejects %s with a typed error and writes nothing', async (_label, request, message) => {
      const attempt = c.queue.enqueue(request);
      await expect(attempt).rejects.toBeInstanceOf(InvalidInputError);
      await expect(attempt).rejects.toThrow(message);
      expect(await c.store.jobList({ limit: 10 })).toEqual([]);
    });

    it('rejects a cyclic payload', () => {
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      expect(() => prepareJob({ class: 'email', payload: cyclic }, c.clock)).toThrow(InvalidInputError);
    });
  });
  describe('claim', () => {
    it('claims only the given classes, only due jobs, priority first then FIFO', async () => {
      const low = await enqueue({ priority: 0 });
      const high = await enqueue({ priority: 10 });
      const lowLater = await enqueue({ priority: 0 });
      const delayed = await enqueue({ priority: 100, delay: 60 });
      await enqueue({ class: 'sms', priority: 1000 });

      const claimed = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 10, leaseMs: LEASE_MS });
      expect(claimed.map((j) => j.id)).toEqual([high, low, lowLater]);

      c.clock.advance(60_000);
      const [later] = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 10, leaseMs: LEASE_MS });
      expect(later?.id).toBe(delayed);
    });

    it('orders by run_at then id within a priority', async () => {
      const b = await enqueue({ delay: 2 });
      const a = await enqueue({ delay: 1 });
      c.clock.advance(5_000);
      const claimed = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 2, leaseMs: LEASE_MS });
      expect(claimed.map((j) => j.id)).toEqual([a, b]);
    });

    it('claims across several classes', async () => {
      await enqueue({ class: 'email' });
      await enqueue({ class: 'sms' });
      await enqueue({ class: 'push' });
      const claimed = await claimJobs(c.store, {
        classes: ['email', 'sms'],
        ownerId: OWNER_A,
        limit: 10,
        leaseMs: LEASE_MS,
      });
      expect(claimed.map((j) => j.class).sort()).toEqual(['email', 'sms']);
    });

    it('gives each claim a fresh token and an attempt row; its event waits for the start, which carries it', async () => {
      await enqueue();
      await enqueue();
      const [a, b] = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 2, leaseMs: LEASE_MS });
      expect(a!.leaseToken).toMatch(/^[0-9a-f]{32}$/);
      expect(a!.leaseToken).not.toBe(b!.leaseToken);
      expect(a!.attempt).toBe(1);
      expect(a!.leaseExpiresAt).toBe(c.clock.now() + LEASE_MS);
      const job = await c.store.jobGet({ id: a!.id });
      expect(job).toMatchObject({ status: 'CLAIMED', owner_id: OWNER_A, lease_token: a!.leaseToken, attempts: 1 });
      const attempts = await c.store.attemptList({ jobId: a!.id });
      expect(attempts).toMatchObject([
        { attempt: 1, owner_id: OWNER_A, lease_token: a!.leaseToken, status: 'RUNNING' },
      ]);
      expect(await eventsOf(a!.id)).toEqual(['ENQUEUED']);
      expect(await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_B, limit: 5, leaseMs: LEASE_MS })).toEqual(
        [],
      );
      const claimedAt = c.clock.now();
      c.clock.advance(7);
      await c.store.jobStart({ id: a!.id, leaseToken: a!.leaseToken, leaseMs: LEASE_MS });
      const started = (await c.store.eventList({ jobId: a!.id }))[1]!;
      expect(started).toMatchObject({ event: 'STARTED', ts: claimedAt + 7 });
      expect(JSON.parse(started.detail!)).toEqual({ attempt: 1, owner_id: OWNER_A, claimed_at: claimedAt });
    });
  });
  describe('the lease holder', () => {
    it('starts, heartbeats, reports progress and completes once', async () => {
      const id = await enqueue();
      const job = await claimOne();
      await c.store.jobStart({ id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      c.clock.advance(10_000);
      const beat = await extendLease(c.store, { id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      expect(beat).toEqual({ leaseExpiresAt: c.clock.now() + LEASE_MS, cancelRequested: false });
      await c.store.jobProgress({ id, leaseToken: job.leaseToken, progress: '{"done":50}' });
      await completeIfHeld(c.store, { id, leaseToken: job.leaseToken, result: '{"ok":true}' });

      const row = await c.store.jobGet({ id });
      expect(row).toMatchObject({
        status: 'SUCCEEDED',
        result: '{"ok":true}',
        progress: '{"done":50}',
        finished_at: c.clock.now(),
      });
      // owner and token stay: they say who finished it
      expect(row).toMatchObject({ owner_id: OWNER_A, lease_token: job.leaseToken });
      expect(await c.store.attemptList({ jobId: id })).toMatchObject([
        { attempt: 1, status: 'SUCCEEDED', finished_at: c.clock.now() },
      ]);
      expect(await eventsOf(id)).toEqual(['ENQUEUED', 'STARTED', 'SUCCEEDED']);
      await expect(completeIfHeld(c.store, { id, leaseToken: job.leaseToken, result: null })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
    });

    it('retries a failure with the delay given, then dead-letters it when retries are spent', async () => {
      const id = await enqueue({ maxRetries: 1 });
      const first = await claimOne();
      await c.store.jobStart({ id, leaseToken: first.leaseToken, leaseMs: LEASE_MS });
      const error = { code: 'UPSTREAM:DOWN', detail: 'smtp 421', retryable: true };
      const outcome = await failIfHeld(c.store, { id, leaseToken: first.leaseToken, error, retryDelayMs: 4_000 });
      expect(outcome).toEqual({ status: 'QUEUED', runAt: c.clock.now() + 4_000 });
      expect(await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 1, leaseMs: LEASE_MS })).toEqual(
        [],
      );

      c.clock.advance(4_000);
      const second = await claimOne(OWNER_B);
      expect(second.attempt).toBe(2);
      await c.store.jobStart({ id, leaseToken: second.leaseToken, leaseMs: LEASE_MS });
      const final = await failIfHeld(c.store, { id, leaseToken: second.leaseToken, error, retryDelayMs: 4_000 });
      expect(final).toEqual({ status: 'FAILED' });

      const row = await c.store.jobGet({ id });
      expect(row).toMatchObject({
        status: 'FAILED',
        attempts: 2,
        error_code: 'UPSTREAM:DOWN',
        error_detail: 'smtp 421',
      });
      expect(await c.store.attemptList({ jobId: id })).toMatchObject([
        { attempt: 1, status: 'FAILED', error_code: 'UPSTREAM:DOWN', owner_id: OWNER_A },
        { attempt: 2, status: 'FAILED', error_code: 'UPSTREAM:DOWN', owner_id: OWNER_B },
      ]);
      expect(await eventsOf(id)).toEqual(['ENQUEUED', 'STARTED', 'RETRY_SCHEDULED', 'STARTED', 'FAILED']);
    });

    it('sends a non-retryable error straight to FAILED', async () => {
      const id = await enqueue({ maxRetries: 5 });
      const job = await claimOne();
      const error = { code: 'INVALID_INPUT:ADDRESS', detail: 'no @', retryable: false };
      expect(await failIfHeld(c.store, { id, leaseToken: job.leaseToken, error, retryDelayMs: 1 })).toEqual({
        status: 'FAILED',
      });
    });

    it('releases a held job without spending a retry', async () => {
      const id = await enqueue({ maxRetries: 0 });
      const job = await claimOne();
      await c.store.jobStart({ id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      await releaseIfHeld(c.store, { id, leaseToken: job.leaseToken, reason: 'shutdown' });
      expect(await c.store.jobGet({ id })).toMatchObject({ status: 'QUEUED', attempts: 1, releases: 1 });

      const again = await claimOne();
      expect(again.attempt).toBe(2);
      const error = { code: 'X:Y', detail: 'boom', retryable: true };
      // max_retries 0: this is the one real run, so a failure is final
      expect(await failIfHeld(c.store, { id, leaseToken: again.leaseToken, error, retryDelayMs: 1 })).toEqual({
        status: 'FAILED',
      });
      expect((await c.store.attemptList({ jobId: id })).map((a) => [a.attempt, a.status, a.error_code])).toEqual([
        [1, 'CANCELLED', 'LEASE:RELEASED'],
        [2, 'FAILED', 'X:Y'],
      ]);
    });
  });
}
