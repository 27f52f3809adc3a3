import { describe, expect, it } from 'vitest';
import type { JobListFilter } from '../../../src/store/types.js';
import { claimJobs, completeIfHeld, failIfHeld } from '../../helpers/fenced-writes.js';
import type { Conformance } from './context.js';

/** The dashboard's reads and writes: keyset pages with every filter, keys, the dead letter by error code, per-minute throughput, classes in trouble. */
export function dashboardSuites(c: Conformance): void {
  /** Claims the next job of `cls` and ends it: succeeded, or failed for good with `code`. */
  const finish = async (cls: string, code?: string) => {
    const [job] = await claimJobs(c.store, { classes: [cls], ownerId: 'w', limit: 1, leaseMs: 30_000 });
    if (job === undefined) throw new Error(`nothing to claim in ${cls}`);
    if (code === undefined) await completeIfHeld(c.store, { id: job.id, leaseToken: job.leaseToken, result: null });
    else
      await failIfHeld(c.store, {
        id: job.id,
        leaseToken: job.leaseToken,
        error: { code, detail: 'd', retryable: false },
        retryDelayMs: 0,
      });
    return job.id;
  };
  /** Every page of a list, `limit` at a time, following each page's last id. */
  const allPages = async (filter: Omit<JobListFilter, 'limit' | 'beforeId'>, limit: number) => {
    const pages: number[][] = [];
    for (let beforeId: number | undefined; ;) {
      const page = (await c.store.jobList({ ...filter, limit, beforeId })).map((job) => job.id);
      if (page.length === 0) return pages;
      pages.push(page);
      beforeId = page.at(-1);
    }
  };

  describe('dashboard', () => {
    it('pages every filter newest first by id (keyset), error codes among FAILED jobs only', async () => {
      // ids 1..12, classes a, b, c in turn; a/b jobs fail with E:1 or E:2 or succeed, c jobs stay queued
      await c.queue.enqueueMany(
        Array.from({ length: 12 }, (_, i) => ({ class: ['a', 'b', 'c'][i % 3]!, maxRetries: 0 })),
      );
      const outcomes: Record<number, string | undefined> = {
        1: 'E:1',
        2: 'E:1',
        4: 'E:2',
        5: undefined,
        7: 'E:1',
        8: 'E:2',
        10: 'E:1',
        11: 'E:1',
      };
      for (const [id, code] of Object.entries(outcomes)) {
        const cls = ['a', 'b', 'c'][(Number(id) - 1) % 3]!;
        expect(await finish(cls, code)).toBe(Number(id));
      }
      // a requeued job carries its last error code but is not FAILED: no error-code filter shows it
      await c.queue.enqueue({ class: 'a', maxRetries: 1 }); // id 13
      const [held] = await claimJobs(c.store, { classes: ['a'], ownerId: 'w', limit: 1, leaseMs: 30_000 });
      await failIfHeld(c.store, {
        id: held!.id,
        leaseToken: held!.leaseToken,
        error: { code: 'E:1', detail: 'd', retryable: true },
        retryDelayMs: 60_000,
      });

      expect(await allPages({}, 5)).toEqual([
        [13, 12, 11, 10, 9],
        [8, 7, 6, 5, 4],
        [3, 2, 1],
      ]);
      expect(await allPages({ class: 'a' }, 2)).toEqual([[13, 10], [7, 4], [1]]);
      expect(await allPages({ status: 'FAILED' }, 3)).toEqual([[11, 10, 8], [7, 4, 2], [1]]);
      expect(await allPages({ status: 'QUEUED' }, 4)).toEqual([[13, 12, 9, 6], [3]]);
      expect(await allPages({ class: 'b', status: 'FAILED' }, 2)).toEqual([[11, 8], [2]]);
      expect(await allPages({ errorCode: 'E:1' }, 2)).toEqual([[11, 10], [7, 2], [1]]);
      expect(await allPages({ errorCode: 'E:1', status: 'FAILED' }, 10)).toEqual([[11, 10, 7, 2, 1]]);
      expect(await allPages({ errorCode: 'E:1', class: 'a' }, 2)).toEqual([[10, 7], [1]]);
      expect(await allPages({ errorCode: 'E:2', class: 'b', status: 'FAILED' }, 2)).toEqual([[8]]);
      expect(await allPages({ errorCode: 'E:1', status: 'QUEUED' }, 10)).toEqual([]);
      expect(await allPages({ errorCode: 'E:9' }, 10)).toEqual([]);
      expect((await c.store.jobList({ limit: 10, beforeId: 1 })).map((job) => job.id)).toEqual([]);

      expect(await c.store.jobCountFailed({})).toBe(7);
      expect(await c.store.jobCountFailed({ class: 'a' })).toBe(4);
      expect(await c.store.jobCountFailed({ errorCode: 'E:1' })).toBe(5);
      expect(await c.store.jobCountFailed({ class: 'b', errorCode: 'E:2' })).toBe(1);
      expect(await c.store.jobCountFailed({ class: 'c', errorCode: 'E:1' })).toBe(0);
    });

    it('retries the FAILED jobs of an error code, of a class too, and records each retry', async () => {
      await c.queue.enqueueMany(
        Array.from({ length: 6 }, (_, i) => ({ class: i % 2 === 0 ? 'a' : 'b', maxRetries: 0 })),
      );
      for (const [cls, code] of [
        ['a', 'X:1'],
        ['b', 'X:1'],
        ['a', 'X:2'],
        ['b', 'X:2'],
        ['a', 'X:1'],
        ['b', 'X:1'],
      ] as const)
        await finish(cls, code);
      expect(await c.store.jobRetryFailed({ class: 'a', errorCode: 'X:1', actor: 'dashboard' })).toBe(2);
      expect((await c.store.jobList({ status: 'QUEUED', limit: 10 })).map((job) => job.id)).toEqual([5, 1]);
      expect(await c.store.jobCountFailed({ errorCode: 'X:1' })).toBe(2);
      expect(await c.store.jobRetryFailed({ errorCode: 'X:1', actor: 'dashboard' })).toBe(2);
      expect(await c.store.jobRetryFailed({ errorCode: 'X:1', actor: 'dashboard' })).toBe(0);
      expect(await c.store.jobCountFailed({})).toBe(2);
      const events = await c.store.eventList({ jobId: 6 });
      expect(events.at(-1)).toMatchObject({ event: 'RETRY_SCHEDULED', actor: 'dashboard' });
    });

    it('bulk retry and bulk cancel take only jobs up to throughId, and no more than limit, in batches', async () => {
      await c.queue.enqueueMany(Array.from({ length: 7 }, () => ({ class: 'a', maxRetries: 0 })));
      for (let i = 0; i < 7; i++) await finish('a', 'X:1');
      expect(await c.store.jobRetryFailed({ class: 'a', throughId: 5, limit: 100, actor: 'dashboard' })).toBe(5);
      expect((await c.store.jobList({ status: 'FAILED', limit: 10 })).map((job) => job.id)).toEqual([7, 6]);
      expect(await c.store.jobRetryFailed({ errorCode: 'X:1', throughId: 7, limit: 1, actor: 'dashboard' })).toBe(1);
      expect(await c.store.jobCountFailed({})).toBe(1);

      // more than one batch of queued jobs; those past throughId stay queued
      await c.queue.enqueueMany(Array.from({ length: 1_200 }, (_, i) => ({ class: i % 2 === 0 ? 'b' : 'c' })));
      const newest = (await c.store.jobList({ limit: 1 }))[0]!.id;
      const through = newest - 100;
      expect(await c.store.jobCancelQueued({ class: 'b', throughId: through, limit: 2, actor: 'dashboard' })).toBe(2);
      expect(await c.store.jobCancelQueued({ throughId: through, limit: 10_000, actor: 'dashboard' })).toBe(
        through - 1 - 2,
      ); // all but the one still FAILED and the two cancelled
      const queued = await c.store.jobList({ status: 'QUEUED', limit: 2_000 });
      expect(queued.map((job) => job.id).sort((x, y) => x - y)).toEqual([
        ...Array.from({ length: 100 }, (_, i) => through + 1 + i),
      ]);
      const events = await c.store.eventList({ jobId: through });
      expect(events.at(-1)).toMatchObject({ event: 'CANCELLED', actor: 'dashboard' });
      expect(await c.store.jobCancelQueued({ throughId: newest, limit: 10_000, actor: 'dashboard' })).toBe(100);
    });

    it('finds jobs by idempotency key, in any class or in one', async () => {
      const first = await c.enqueue({ class: 'a', key: 'order-7' });
      const second = await c.enqueue({ class: 'b', key: 'order-7' });
      await c.enqueue({ class: 'b', key: 'order-8' });
      expect((await c.store.jobListByKey({ key: 'order-7' })).map((job) => [job.id, job.class])).toEqual([
        [second, 'b'],
        [first, 'a'],
      ]);
      expect((await c.store.jobListByKey({ key: 'order-7', class: 'a' })).map((job) => job.id)).toEqual([first]);
      expect(await c.store.jobListByKey({ key: 'order-7', class: 'c' })).toEqual([]);
      expect(await c.store.jobListByKey({ key: 'nope' })).toEqual([]);
    });

    it('counts SUCCEEDED and FAILED jobs per minute of finishing, within [since, until)', async () => {
      const t0 = c.clock.now(); // a whole minute
      await c.queue.enqueueMany(Array.from({ length: 6 }, () => ({ class: 'a', maxRetries: 0 })));
      await finish('a'); // t0
      c.clock.advance(59_999);
      await finish('a', 'E:1'); // t0 + 59.999 s: still the first minute
      c.clock.advance(1);
      await finish('a'); // t0 + 60 s
      await finish('a');
      c.clock.advance(120_000);
      await finish('a'); // t0 + 180 s
      await c.store.jobCancel({ id: 6, actor: 'op' }); // cancelled: not throughput
      expect(await c.store.statsFinishedByMinute({ since: t0, until: c.clock.now() + 1 })).toEqual([
        { minute: t0, status: 'FAILED', count: 1 },
        { minute: t0, status: 'SUCCEEDED', count: 1 },
        { minute: t0 + 60_000, status: 'SUCCEEDED', count: 2 },
        { minute: t0 + 180_000, status: 'SUCCEEDED', count: 1 },
      ]);
      expect(await c.store.statsFinishedByMinute({ since: t0 + 60_000, until: t0 + 180_000 })).toEqual([
        { minute: t0 + 60_000, status: 'SUCCEEDED', count: 2 },
      ]);
    });

    it('lists classes disabled by live supervisors only, and clears them', async () => {
      const supervisor = (id: string, host: string) =>
        c.store.workerRegister({
          id,
          kind: 'supervisor',
          host,
          supervisorId: null,
          pid: 1,
          class: null,
          state: 'ready',
          restarts: 0,
        });
      await supervisor('sup-old', 'h1');
      await c.store.classDisabledRecord({ supervisorId: 'sup-old', class: 'a', reason: 'stale supervisor' });
      c.clock.advance(10_000);
      await supervisor('sup-1', 'h1');
      await supervisor('sup-2', 'h2');
      await supervisor('sup-gone', 'h3');
      await c.store.classDisabledRecord({ supervisorId: 'sup-1', class: 'a', reason: 'handler failed to load' });
      await c.store.classDisabledRecord({ supervisorId: 'sup-1', class: 'b', reason: 'first' });
      await c.store.classDisabledRecord({ supervisorId: 'sup-1', class: 'b', reason: 'crash loop' });
      await c.store.classDisabledRecord({ supervisorId: 'sup-2', class: 'a', reason: 'crash loop' });
      await c.store.classDisabledRecord({ supervisorId: 'sup-gone', class: 'c', reason: 'exited supervisor' });
      await c.store.workerExit({ id: 'sup-gone', state: 'exited', exitCode: 0, exitSignal: null });
      const liveSince = c.clock.now() - 5_000;
      expect(await c.store.classDisabledList({ liveSince })).toEqual([
        {
          class: 'a',
          supervisor_id: 'sup-1',
          host: 'h1',
          reason: 'handler failed to load',
          disabled_at: c.clock.now(),
        },
        { class: 'a', supervisor_id: 'sup-2', host: 'h2', reason: 'crash loop', disabled_at: c.clock.now() },
        { class: 'b', supervisor_id: 'sup-1', host: 'h1', reason: 'crash loop', disabled_at: c.clock.now() },
      ]);
      await c.store.classDisabledClear({ supervisorId: 'sup-1', class: 'a' });
      expect(
        (await c.store.classDisabledList({ liveSince })).map((row) => `${row.class}@${row.supervisor_id}`),
      ).toEqual(['a@sup-2', 'b@sup-1']);
      await c.store.classDisabledClear({ supervisorId: 'sup-2' });
      expect(
        (await c.store.classDisabledList({ liveSince })).map((row) => `${row.class}@${row.supervisor_id}`),
      ).toEqual(['b@sup-1']);
    });

    it("lists the abnormal exits of live supervisors' children in a window, newest first", async () => {
      const register = (id: string, kind: 'supervisor' | 'child', supervisorId: string | null) =>
        c.store.workerRegister({
          id,
          kind,
          host: 'h',
          supervisorId,
          pid: 1,
          class: kind === 'child' ? 'a' : null,
          state: 'ready',
          restarts: 0,
        });
      const exit = (id: string, exitCode: number | null, exitSignal: string | null) =>
        c.store.workerExit({ id, state: 'exited', exitCode, exitSignal });
      await register('sup', 'supervisor', null);
      await register('sup-gone', 'supervisor', null);
      for (const id of ['c1', 'c2', 'c3', 'c4', 'c5']) await register(id, 'child', 'sup');
      await register('g1', 'child', 'sup-gone');
      await exit('c1', 1, null); // before the window
      c.clock.advance(60_000);
      const since = c.clock.now();
      await exit('c2', 0, null); // a clean exit
      await exit('c3', null, 'SIGKILL');
      c.clock.advance(1_000);
      await exit('c4', 3, null);
      await exit('g1', 1, null);
      await exit('sup-gone', 0, null);
      const crashes = await c.store.workerCrashList({ since, liveSince: since - 120_000, limit: 10 });
      expect(crashes).toEqual([
        { id: 'c4', class: 'a', supervisor_id: 'sup', exited_at: since + 1_000, exit_code: 3, exit_signal: null },
        { id: 'c3', class: 'a', supervisor_id: 'sup', exited_at: since, exit_code: null, exit_signal: 'SIGKILL' },
      ]);
      expect(await c.store.workerCrashList({ since, liveSince: since - 120_000, limit: 1 })).toHaveLength(1);
      // the supervisor's heartbeat is older than liveSince: stale, so its children's exits do not count
      expect(await c.store.workerCrashList({ since, liveSince: c.clock.now() + 1, limit: 10 })).toEqual([]);
    });
  });
}
