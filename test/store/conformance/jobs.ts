import { describe, expect, it } from 'vitest';
import { InvalidInputError, LeaseLostError } from '../../../src/errors.js';
import { prepareJob, type EnqueueRequest } from '../../../src/queue/enqueue.js';
import type { ClaimedJob } from '../../../src/store/types.js';
import { claimJobs, completeIfHeld, extendLease, failIfHeld, releaseIfHeld } from '../../helpers/fenced-writes.js';
import { fixedDelay, LEASE_MS, OWNER_A, OWNER_B, type Conformance } from './context.js';

/** Enqueue, claim, the lease holder's writes, and the batched hot path. */
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
