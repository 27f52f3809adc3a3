import { describe, expect, it } from 'vitest';
import type { ClassConfig } from '../../../src/config/schema.js';
import { LeaseLostError } from '../../../src/errors.js';
import { collectStats } from '../../../src/reports/stats.js';
import { claimJobs, completeIfHeld, extendLease, failIfHeld, releaseIfHeld } from '../../helpers/fenced-writes.js';
import { DAY, HOUR, LEASE_MS, OWNER_A, type Conformance } from './context.js';

/** Operators' writes, the operator statements' answers, integrity, and the workers registry. */
export function operatorSuites(c: Conformance): void {
  const { enqueue, claimOne } = c;
  describe('operators', () => {
    it('cancels a queued job at once and a running one through its next heartbeat', async () => {
      const queued = await enqueue();
      const running = await enqueue();
      expect(await c.store.jobCancel({ id: queued, actor: 'operator' })).toBe('cancelled');
      expect(await c.store.jobGet({ id: queued })).toMatchObject({ status: 'CANCELLED', finished_at: c.clock.now() });

      const job = await claimOne();
      expect(job.id).toBe(running);
      await c.store.jobStart({ id: running, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      expect(await c.store.jobCancel({ id: running, actor: 'operator' })).toBe('cancel_requested');
      expect(await c.store.jobCancel({ id: running, actor: 'operator' })).toBe('already_requested');
      const beat = await extendLease(c.store, { id: running, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      expect(beat.cancelRequested).toBe(true);
      const aborted = { code: 'CANCELLED:BY_OPERATOR', detail: 'aborted', retryable: true };
      expect(
        await failIfHeld(c.store, { id: running, leaseToken: job.leaseToken, error: aborted, retryDelayMs: 1 }),
      ).toEqual({
        status: 'CANCELLED',
      });
      expect(await c.store.attemptList({ jobId: running })).toMatchObject([{ status: 'CANCELLED' }]);
      expect(await c.store.jobCancel({ id: running, actor: 'operator' })).toBe('terminal');
      expect(await c.store.jobCancel({ id: 424242, actor: 'operator' })).toBe('not_found');
    });

    it('retries one FAILED job, or all of a class', async () => {
      const ids = [
        await enqueue({ maxRetries: 0 }),
        await enqueue({ maxRetries: 0 }),
        await enqueue({ class: 'sms', maxRetries: 0 }),
      ];
      const error = { code: 'X:Y', detail: 'no', retryable: true };
      for (const cls of ['email', 'email', 'sms']) {
        const job = await claimOne(OWNER_A, [cls]);
        await failIfHeld(c.store, { id: job.id, leaseToken: job.leaseToken, error, retryDelayMs: 0 });
      }
      expect(await c.store.jobRetry({ id: ids[0]!, actor: 'operator' })).toBe('queued');
      expect(await c.store.jobRetry({ id: ids[0]!, actor: 'operator' })).toBe('not_failed');
      expect(await c.store.jobRetry({ id: 424242, actor: 'operator' })).toBe('not_found');
      expect(await c.store.jobRetryFailed({ class: 'email', actor: 'operator' })).toBe(1);
      expect(await c.store.jobRetryFailed({ actor: 'operator' })).toBe(1);
      const again = await claimOne(OWNER_A, ['email']);
      expect(again.attempt).toBe(2);
      // the manual retry grants exactly one more run
      expect(await failIfHeld(c.store, { id: again.id, leaseToken: again.leaseToken, error, retryDelayMs: 0 })).toEqual(
        { status: 'FAILED' },
      );
    });

    it('deletes a job together with its attempts and events', async () => {
      const id = await enqueue();
      const job = await claimOne();
      await completeIfHeld(c.store, { id, leaseToken: job.leaseToken, result: null });
      const prune = { status: 'SUCCEEDED' as const, finishedBefore: c.clock.now() + 1, limit: 10 };
      expect(await c.store.jobsPruneBatch(prune)).toBe(1);
      expect(await c.store.jobGet({ id })).toBeUndefined();
      expect(await c.store.attemptList({ jobId: id })).toEqual([]);
      expect(await c.store.eventList({ jobId: id })).toEqual([]);
      expect(await c.store.jobsPruneBatch(prune)).toBe(0);
    });

    it('lists newest first with filters', async () => {
      const first = await enqueue();
      const second = await enqueue({ class: 'sms' });
      const third = await enqueue();
      await c.store.jobCancel({ id: third, actor: 'operator' });
      expect((await c.store.jobList({ limit: 10 })).map((j) => j.id)).toEqual([third, second, first]);
      expect((await c.store.jobList({ limit: 10, class: 'email' })).map((j) => j.id)).toEqual([third, first]);
      expect((await c.store.jobList({ limit: 10, status: 'QUEUED' })).map((j) => j.id)).toEqual([second, first]);
      expect((await c.store.jobList({ limit: 10, status: 'QUEUED', class: 'email' })).map((j) => j.id)).toEqual([
        first,
      ]);
      expect((await c.store.jobList({ limit: 1 })).map((j) => j.id)).toEqual([third]);
    });
  });
  describe('operator statements: the answers', () => {
    const claimFrom = async (cls: string, owner: string) => {
      const [job] = await claimJobs(c.store, { classes: [cls], ownerId: owner, limit: 1, leaseMs: 30_000 });
      if (job === undefined) throw new Error(`nothing to claim in ${cls}`);
      return job;
    };
    const failOne = async (cls: string, code: string) => {
      const job = await claimFrom(cls, 'w');
      return failIfHeld(c.store, {
        id: job.id,
        leaseToken: job.leaseToken,
        error: { code, detail: 'd', retryable: true },
        retryDelayMs: 0,
      });
    };

    it('counts, retries, errors (overall and per class, in a window), throughput and in-flight jobs', async () => {
      const T0 = c.clock.now();
      await c.queue.enqueueMany([
        { class: 'a', maxRetries: 2 },
        { class: 'a', maxRetries: 0 },
        { class: 'b', maxRetries: 1 },
        { class: 'b', maxRetries: 0 },
        { class: 'c' },
      ]);
      // An old failure, outside a 1-hour window.
      await failOne('a', 'OLD:ERROR'); // job 1: attempt 1 fails, requeued
      c.clock.advance(2 * HOUR);
      await failOne('a', 'NET:DOWN'); // job 2 (max 0): FAILED
      await failOne('a', 'NET:DOWN'); // job 1: attempt 2 fails, requeued
      const a1 = await claimFrom('a', 'w'); // job 1: attempt 3 succeeds
      await completeIfHeld(c.store, { id: a1.id, leaseToken: a1.leaseToken, result: null });
      await failOne('b', 'NET:DOWN'); // job 3: requeued
      await failOne('b', 'DISK:FULL'); // job 4 (max 0): FAILED
      c.clock.advance(120_000);
      const b3 = await claimFrom('b', 'w'); // job 3, attempt 2: done
      await completeIfHeld(c.store, { id: b3.id, leaseToken: b3.leaseToken, result: null });

      expect(await c.store.statsCounts()).toEqual([
        { class: 'a', status: 'FAILED', count: 1 },
        { class: 'a', status: 'SUCCEEDED', count: 1 },
        { class: 'b', status: 'FAILED', count: 1 },
        { class: 'b', status: 'SUCCEEDED', count: 1 },
        { class: 'c', status: 'QUEUED', count: 1 },
      ]);
      expect(await c.store.statsRetries({ since: 0 })).toEqual([
        { class: 'a', status: 'FAILED', attempts: 1, jobs: 1 },
        { class: 'a', status: 'SUCCEEDED', attempts: 3, jobs: 1 },
        { class: 'b', status: 'FAILED', attempts: 1, jobs: 1 },
        { class: 'b', status: 'SUCCEEDED', attempts: 2, jobs: 1 },
      ]);
      const window = c.clock.now() - HOUR;
      expect(await c.store.statsTopErrors({ since: window, limit: 10 })).toEqual([
        { code: 'NET:DOWN', count: 3, last_at: T0 + 2 * HOUR },
        { code: 'DISK:FULL', count: 1, last_at: T0 + 2 * HOUR },
      ]);
      expect((await c.store.statsTopErrors({ since: 0, limit: 10 })).map((e) => e.code)).toEqual([
        'NET:DOWN',
        'DISK:FULL',
        'OLD:ERROR',
      ]);
      expect(await c.store.statsTopErrors({ since: 0, limit: 1 })).toHaveLength(1);
      expect(await c.store.statsTopErrorsByClass({ since: window, limit: 1 })).toEqual([
        { class: 'a', code: 'NET:DOWN', count: 2, last_at: T0 + 2 * HOUR },
        { class: 'b', code: 'DISK:FULL', count: 1, last_at: T0 + 2 * HOUR },
      ]);
      expect(await c.store.statsFinishedSince({ since: c.clock.now() - 60_000 })).toEqual([
        { status: 'SUCCEEDED', count: 1 },
      ]);
      expect(await c.store.statsFinishedSince({ since: 0 })).toEqual([
        { status: 'FAILED', count: 2 },
        { status: 'SUCCEEDED', count: 2 },
      ]);

      // In flight: held longest first, the owner's pid from the registry (null when unknown).
      await c.store.workerRegister({
        id: 'child-1',
        kind: 'child',
        host: 'h',
        supervisorId: 's',
        pid: 4242,
        class: 'c',
        state: 'busy',
        restarts: 0,
      });
      await c.queue.enqueue({ class: 'c' });
      const first = await claimFrom('c', 'child-1');
      c.clock.advance(5_000);
      await c.store.jobStart({ id: first.id, leaseToken: first.leaseToken, leaseMs: 30_000 });
      const second = await claimFrom('c', 'unknown-owner');
      c.clock.advance(1_000);
      const rows = await c.store.statsInFlight({ limit: 10 });
      expect(rows.map((r) => [r.id, r.status, r.owner_id, r.pid])).toEqual([
        [first.id, 'RUNNING', 'child-1', 4242],
        [second.id, 'CLAIMED', 'unknown-owner', null],
      ]);
      expect(await c.store.statsInFlight({ limit: 1 })).toHaveLength(1);

      const report = await collectStats(c.store, {
        now: c.clock.now(),
        retention: { succeeded_days: 30, failed_days: 90, cancelled_days: 30, batch_size: 100, interval_seconds: 60 },
        windowMs: HOUR,
        // Config order, not by name: each class's window is read at once with the rest of the report.
        classes: [
          { name: 'c', rate_limit: { max: 2, per_seconds: 60 } },
          { name: 'b' },
          { name: 'a', rate_limit: { max: 1, per_seconds: 3600 } },
        ] as unknown as ClassConfig[],
      });
      expect(report.rate_limits).toEqual([
        {
          class: 'c',
          max: 2,
          per_seconds: 60,
          started: 0,
          waiting: false,
          next_start_at: null,
          next_start_in_ms: null,
        },
        {
          class: 'a',
          max: 1,
          per_seconds: 3600,
          started: 0,
          waiting: false,
          next_start_at: null,
          next_start_in_ms: null,
        },
      ]);
      expect(report.in_flight[0]).toMatchObject({
        id: first.id,
        pid: 4242,
        attempt: 1,
        held_ms: 6_000,
        runtime_ms: 1_000,
        heartbeat_age_ms: 1_000,
        lease_left_ms: 29_000,
      });
      expect(report.in_flight[1]).toMatchObject({ runtime_ms: null, held_ms: 1_000 });
      expect(report.jobs.total).toMatchObject({ QUEUED: 0, CLAIMED: 1, RUNNING: 1, SUCCEEDED: 2, FAILED: 2, total: 6 });
      expect(report.jobs.by_class.map((row) => row.class)).toEqual(['a', 'b', 'c']);
      expect(report.retries).toMatchObject({ finished: 4, retried: 2 });
      expect(report.throughput.last_hour).toMatchObject({ SUCCEEDED: 2, FAILED: 2, total: 4 });
      expect(report.errors.top.map((e) => e.code)).toEqual(['NET:DOWN', 'DISK:FULL']);
    });

    it('attempts handed back at shutdown are neither errors nor spent attempts', async () => {
      await c.queue.enqueue({ class: 'a' });
      const held = await claimFrom('a', 'w');
      await releaseIfHeld(c.store, { id: held.id, leaseToken: held.leaseToken, reason: 'shutdown' });
      const again = await claimFrom('a', 'w');
      await completeIfHeld(c.store, { id: again.id, leaseToken: again.leaseToken, result: null });
      expect(await c.store.statsTopErrors({ since: 0, limit: 10 })).toEqual([]);
      expect(await c.store.statsRetries({ since: 0 })).toEqual([
        { class: 'a', status: 'SUCCEEDED', attempts: 1, jobs: 1 },
      ]);
    });

    it('zombie writes are counted from the timeline', async () => {
      await c.queue.enqueue({ class: 'a' });
      const job = await claimFrom('a', 'w');
      expect(await c.store.statsZombieWrites()).toBe(0);
      await expect(extendLease(c.store, { id: job.id, leaseToken: 'stale', leaseMs: 1_000 })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
      await expect(completeIfHeld(c.store, { id: job.id, leaseToken: 'stale', result: null })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
      expect(await c.store.statsZombieWrites()).toBe(2);
    });

    it('prune: counts and deletes by status and age, in batches; a job retried meanwhile stays', async () => {
      await c.queue.enqueueMany(Array.from({ length: 5 }, () => ({ class: 'a', maxRetries: 0 })));
      for (let i = 0; i < 5; i++) {
        const job = await claimFrom('a', 'w');
        if (i < 3) await completeIfHeld(c.store, { id: job.id, leaseToken: job.leaseToken, result: null });
        else
          await failIfHeld(c.store, {
            id: job.id,
            leaseToken: job.leaseToken,
            error: { code: 'X:Y', detail: 'd', retryable: false },
            retryDelayMs: 0,
          });
        c.clock.advance(DAY);
      }
      const now = c.clock.now();
      // SUCCEEDED at T0, T0+1d, T0+2d; FAILED at T0+3d, T0+4d; now = T0+5d
      expect(await c.store.jobsPruneCount({ status: 'SUCCEEDED', finishedBefore: now - 3 * DAY })).toBe(2);
      expect(await c.store.jobsPruneCount({ status: 'FAILED', finishedBefore: now })).toBe(2);
      expect(await c.store.jobRetry({ id: 4, actor: 'op' })).toBe('queued');
      expect(await c.store.jobsPruneCount({ status: 'FAILED', finishedBefore: now })).toBe(1);
      expect(await c.store.jobsPruneBatch({ status: 'SUCCEEDED', finishedBefore: now - 3 * DAY, limit: 1 })).toBe(1);
      expect(await c.store.jobGet({ id: 1 })).toBeUndefined();
      expect(await c.store.attemptList({ jobId: 1 })).toEqual([]);
      expect(await c.store.eventList({ jobId: 1 })).toEqual([]);
      expect(await c.store.jobsPruneBatch({ status: 'SUCCEEDED', finishedBefore: now - 3 * DAY, limit: 10 })).toBe(1);
      expect(await c.store.jobsPruneBatch({ status: 'SUCCEEDED', finishedBefore: now - 3 * DAY, limit: 10 })).toBe(0);
      expect(await c.store.jobsPruneBatch({ status: 'FAILED', finishedBefore: now, limit: 10 })).toBe(1);
      expect((await c.store.jobList({ limit: 10 })).map((job) => [job.id, job.status])).toEqual([
        [4, 'QUEUED'],
        [3, 'SUCCEEDED'],
      ]);
      const size = await c.store.databaseSize();
      expect(size.bytes).toBe(size.pageCount * size.pageSize);
      expect(size.pageCount).toBeGreaterThan(0);
      expect(await c.store.schemaVersion()).toBeGreaterThanOrEqual(2);
      await expect(c.store.ping()).resolves.toBeUndefined();
    });
  });
  describe('integrity', () => {
    it('finds nothing wrong with a database in use', async () => {
      await enqueue();
      const job = await claimOne();
      await completeIfHeld(c.store, { id: job.id, leaseToken: job.leaseToken, result: null });
      await enqueue();
      expect(await c.store.integrityCheck()).toEqual([]);
    });
  });
  describe('workers', () => {
    it('the oldest due job of each class, and whether a class was ever served', async () => {
      const first = c.clock.now();
      await enqueue();
      c.clock.advance(1_000);
      await enqueue();
      // the oldest whatever its priority: a later job of a higher one hides nothing
      await enqueue({ priority: 9 });
      await enqueue({ class: 'sms', runAt: c.clock.now() + 60_000 });
      await enqueue({ class: 'sms', priority: 5, runAt: c.clock.now() + 30_000 });
      const held = await enqueue({ class: 'video' });
      expect((await claimOne(OWNER_A, ['video'])).id).toBe(held);
      expect(await c.store.statsOldestDue({ now: c.clock.now() })).toEqual([{ class: 'email', run_at: first }]);
      expect(await c.store.statsOldestDue({ now: c.clock.now() + 60_000 })).toEqual([
        { class: 'email', run_at: first },
        { class: 'sms', run_at: c.clock.now() + 30_000 },
      ]);

      expect(await c.store.workerClassServed({ class: 'email' })).toBe(false);
      expect(await c.store.workerServedClasses({ limit: 10 })).toEqual([]);
      await c.store.workerRegister({
        id: 'child-9',
        kind: 'child',
        host: 'h1',
        supervisorId: 'sup-9',
        pid: 9,
        class: 'email',
        state: 'ready',
        restarts: 0,
      });
      await c.store.workerExit({ id: 'child-9', state: 'exited', exitCode: 0, exitSignal: null });
      expect(await c.store.workerClassServed({ class: 'email' })).toBe(true);
      expect(await c.store.workerClassServed({ class: 'sms' })).toBe(false);
      await c.store.workerRegister({
        id: 'child-8',
        kind: 'child',
        host: 'h1',
        supervisorId: 'sup-9',
        pid: 8,
        class: 'alerts',
        state: 'ready',
        restarts: 0,
      });
      expect(await c.store.workerServedClasses({ limit: 10 })).toEqual(['alerts', 'email']);
      expect(await c.store.workerServedClasses({ limit: 1 })).toEqual(['alerts']);
    });

    it('registers, heartbeats, exits and lists', async () => {
      const base = { host: 'h1', supervisorId: 'sup-1', restarts: 0 } as const;
      await c.store.workerRegister({
        ...base,
        id: 'sup-1',
        kind: 'supervisor',
        supervisorId: null,
        pid: 10,
        class: null,
        state: 'ready',
      });
      await c.store.workerRegister({
        ...base,
        id: 'child-1',
        kind: 'child',
        pid: 11,
        class: 'email',
        state: 'starting',
      });
      c.clock.advance(1_000);
      await c.store.workerHeartbeat({ id: 'child-1', state: 'busy', cpuPercent: 12.5, memoryBytes: 1024, jobId: 7 });
      await c.store.workerHeartbeat({ id: 'child-1' });
      const live = await c.store.workerListLiveOnHost({ host: 'h1' });
      expect(live.map((w) => w.id).sort()).toEqual(['child-1', 'sup-1']);
      expect(live.find((w) => w.id === 'child-1')).toMatchObject({
        state: 'busy',
        heartbeat_at: c.clock.now(),
        cpu_percent: 12.5,
        memory_bytes: 1024,
        job_id: 7,
      });
      await c.store.workerHeartbeat({ id: 'child-1', jobId: null });
      expect((await c.store.workerListLiveOnHost({ host: 'h1' })).find((w) => w.id === 'child-1')?.job_id).toBeNull();
      await c.store.workerExit({ id: 'child-1', state: 'exited', exitCode: null, exitSignal: 'SIGKILL' });
      expect((await c.store.workerListLiveOnHost({ host: 'h1' })).map((w) => w.id)).toEqual(['sup-1']);
      expect(await c.store.workerListLiveOnHost({ host: 'h2' })).toEqual([]);
      expect((await c.store.workerList({ includeExited: false, limit: 10 })).map((w) => w.id)).toEqual(['sup-1']);
      expect(await c.store.workerList({ includeExited: true, limit: 10 })).toHaveLength(2);
    });
  });
}
