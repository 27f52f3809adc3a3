import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/errors.js';
import { completeIfHeld, failIfHeld } from '../../helpers/fenced-writes.js';
import { DAY, type Conformance } from './context.js';

const NOT_RETRYABLE = { code: 'HANDLER:Error', detail: 'boom', retryable: false };

/** Flows (dependsOn, WAITING, dependents' fates) and keys with a scope and a lifetime. */
export function flowSuites(c: Conformance): void {
  const statusOf = async (id: number) => (await c.store.jobGet({ id }))!;
  const succeed = async (id: number) => {
    const job = await c.claimOne();
    expect(job.id).toBe(id);
    await completeIfHeld(c.store, { id, leaseToken: job.leaseToken, result: JSON.stringify({ from: id }) });
  };
  const fail = async (id: number) => {
    const job = await c.claimOne();
    expect(job.id).toBe(id);
    await failIfHeld(c.store, { id, leaseToken: job.leaseToken, error: NOT_RETRYABLE, retryDelayMs: 0 });
  };

  describe('flows', () => {
    it('builds a fan-out and fan-in in one enqueueMany by ref; the fan-in is queued by its last parent', async () => {
      const [root, a, b, join] = await c.queue.enqueueMany([
        { class: 'email', ref: 'root' },
        { class: 'email', ref: 'a', dependsOn: ['root'] },
        { class: 'email', ref: 'b', dependsOn: ['root'] },
        { class: 'email', dependsOn: ['a', 'b'] },
      ]);
      expect([root, a, b, join].map((j) => j!.created)).toEqual([true, true, true, true]);
      expect((await statusOf(join!.id)).status).toBe('WAITING');
      await succeed(root!.id);
      expect((await statusOf(a!.id)).status).toBe('QUEUED');
      expect((await statusOf(b!.id)).status).toBe('QUEUED');
      await succeed(a!.id);
      expect((await statusOf(join!.id)).status).toBe('WAITING');
      await succeed(b!.id);
      expect((await statusOf(join!.id)).status).toBe('QUEUED');
      expect(await c.eventsOf(join!.id)).toEqual(['ENQUEUED', 'DEPENDENCIES_MET']);
      expect((await c.store.jobParents({ id: join!.id })).map((p) => [p.id, p.status, p.result])).toEqual([
        [a!.id, 'SUCCEEDED', JSON.stringify({ from: a!.id })],
        [b!.id, 'SUCCEEDED', JSON.stringify({ from: b!.id })],
      ]);
      expect((await c.store.jobChildren({ id: root!.id, limit: 10 })).map((j) => j.id)).toEqual([a!.id, b!.id]);
    });

    it('starts a job whose parents already ended: queued after a success, cancelled after a failure unless it runs anyway', async () => {
      const done = await c.enqueue();
      await succeed(done);
      const failed = await c.enqueue();
      await fail(failed);
      expect((await statusOf(await c.enqueue({ dependsOn: [done] }))).status).toBe('QUEUED');
      const cancelled = await statusOf(await c.enqueue({ dependsOn: [done, failed] }));
      expect(cancelled).toMatchObject({ status: 'CANCELLED', error_code: 'DEPENDENCY:FAILED' });
      expect(cancelled.finished_at).toBe(c.clock.now());
      expect(await c.eventsOf(cancelled.id)).toEqual(['ENQUEUED', 'CANCELLED']);
      const runs = await c.enqueue({ dependsOn: [failed], onParentFailure: 'run' });
      expect((await statusOf(runs)).status).toBe('QUEUED');
    });

    it('refuses a parent that does not exist, a ref no earlier job has, and a bad policy, writing nothing', async () => {
      const before = await c.queue.list({});
      await expect(c.enqueue({ dependsOn: [987654] })).rejects.toThrow(InvalidInputError);
      await expect(c.enqueue({ dependsOn: [987654] })).rejects.toMatchObject({ code: 'INVALID_INPUT:DEPENDS_ON' });
      await expect(
        c.queue.enqueueMany([
          { class: 'email', dependsOn: ['later'] },
          { class: 'email', ref: 'later' },
        ]),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT:DEPENDS_ON' });
      await expect(c.enqueue({ onParentFailure: 'ignore' as 'run' })).rejects.toMatchObject({
        code: 'INVALID_INPUT:ON_PARENT_FAILURE',
      });
      expect(await c.queue.list({})).toEqual(before);
    });

    it('an operator cancelling a waiting job cancels its own dependents, with the parent named', async () => {
      const parent = await c.enqueue();
      const waiting = await c.enqueue({ dependsOn: [parent] });
      const grandchild = await c.enqueue({ dependsOn: [waiting] });
      expect(await c.queue.cancel(waiting)).toMatchObject({ outcome: 'cancelled' });
      expect(await statusOf(waiting)).toMatchObject({ status: 'CANCELLED', pending_parents: 0 });
      expect(await statusOf(grandchild)).toMatchObject({ status: 'CANCELLED', error_code: 'DEPENDENCY:CANCELLED' });
      const [event] = (await c.store.eventList({ jobId: grandchild })).filter((e) => e.event === 'CANCELLED');
      expect(JSON.parse(event!.detail!)).toEqual({ code: 'DEPENDENCY:CANCELLED', parent: waiting });
      await succeed(parent);
      expect((await statusOf(waiting)).status).toBe('CANCELLED');
    });

    it('retrying a failed parent brings back the dependents its failure cancelled, down the chain, each with an event', async () => {
      const failedToo = await c.enqueue();
      await fail(failedToo);
      const parent = await c.enqueue();
      const other = await c.enqueue();
      const child = await c.enqueue({ dependsOn: [parent, other] });
      const grandchild = await c.enqueue({ dependsOn: [child] });
      // Cancelled by another parent's failure, which no retry undoes; and by an operator.
      const stillFailed = await c.enqueue({ dependsOn: [parent, failedToo] });
      const byOperator = await c.enqueue({ dependsOn: [parent] });
      await c.queue.cancel(byOperator);
      await fail(parent);
      expect(await statusOf(child)).toMatchObject({ status: 'CANCELLED', error_code: 'DEPENDENCY:FAILED' });
      expect(await statusOf(grandchild)).toMatchObject({ status: 'CANCELLED', error_code: 'DEPENDENCY:CANCELLED' });

      expect(await c.queue.retry(parent)).toMatchObject({ outcome: 'queued' });
      const revived = { error_code: null, error_detail: null, finished_at: null };
      expect(await statusOf(child)).toMatchObject({ status: 'WAITING', pending_parents: 2, ...revived });
      expect(await statusOf(grandchild)).toMatchObject({ status: 'WAITING', pending_parents: 1, ...revived });
      expect(await statusOf(stillFailed)).toMatchObject({ status: 'CANCELLED', error_code: 'DEPENDENCY:FAILED' });
      expect((await statusOf(byOperator)).status).toBe('CANCELLED');
      const revivals = async (id: number) =>
        (await c.store.eventList({ jobId: id }))
          .filter((e) => e.event === 'REVIVED')
          .map((e) => [e.actor, JSON.parse(e.detail!) as unknown]);
      expect(await revivals(child)).toEqual([['flow', { parent }]]);
      expect(await revivals(grandchild)).toEqual([['flow', { parent: child }]]);

      await succeed(parent);
      expect((await statusOf(child)).status).toBe('WAITING');
      await succeed(other);
      expect((await statusOf(child)).status).toBe('QUEUED');
      await succeed(child);
      expect((await statusOf(grandchild)).status).toBe('QUEUED');
    });

    it("a bulk retry of failed jobs brings back each one's cancelled dependents", async () => {
      const parents = [await c.enqueue(), await c.enqueue()];
      const children = [await c.enqueue({ dependsOn: [parents[0]!] }), await c.enqueue({ dependsOn: [parents[1]!] })];
      for (const id of parents) await fail(id);
      expect(await c.queue.retry({ status: 'FAILED', class: 'email' })).toEqual({ count: 2 });
      for (const id of children) expect(await statusOf(id)).toMatchObject({ status: 'WAITING', pending_parents: 1 });
    });

    it('retention keeps a finished parent while a job still waits on it', async () => {
      const parent = await c.enqueue();
      const other = await c.enqueue();
      const waiting = await c.enqueue({ dependsOn: [parent, other] });
      await succeed(parent);
      c.clock.advance(40 * DAY);
      const prune = { status: 'SUCCEEDED' as const, finishedBefore: c.clock.now() - 30 * DAY };
      expect(await c.store.jobsPruneCount(prune)).toBe(0);
      expect(await c.store.jobsPruneBatch({ ...prune, limit: 10 })).toBe(0);
      await succeed(other);
      expect((await statusOf(waiting)).status).toBe('QUEUED');
      expect(await c.store.jobsPruneBatch({ ...prune, limit: 10 })).toBe(1);
    });

    it('resolves refs across the chunks a large batch is written in', async () => {
      const requests = Array.from({ length: 1_201 }, (_, n) => ({
        class: 'email',
        ref: `r${n}`,
        ...(n === 0 ? {} : { dependsOn: [`r${n - 1}`] }),
      }));
      const jobs = await c.queue.enqueueMany(requests);
      const last = jobs.at(-1)!.id;
      expect((await c.store.jobParents({ id: last })).map((p) => p.id)).toEqual([jobs.at(-2)!.id]);
      expect((await statusOf(jobs[0]!.id)).status).toBe('QUEUED');
      expect((await statusOf(last)).status).toBe('WAITING');
    });
  });

  describe('keys with a scope and a lifetime', () => {
    type Scope = 'row' | 'incomplete';
    const TABLE: { scope: Scope; ttl?: number; state: 'open' | 'ended'; after: number; created: boolean }[] = [
      { scope: 'row', state: 'open', after: 0, created: false },
      { scope: 'row', state: 'ended', after: 0, created: false },
      { scope: 'incomplete', state: 'open', after: 0, created: false },
      { scope: 'incomplete', state: 'ended', after: 0, created: true },
      { scope: 'row', ttl: 60, state: 'open', after: 59_999, created: false },
      { scope: 'row', ttl: 60, state: 'open', after: 60_000, created: true },
      { scope: 'row', ttl: 60, state: 'ended', after: 60_000, created: true },
      { scope: 'incomplete', ttl: 60, state: 'open', after: 60_000, created: true },
      { scope: 'incomplete', ttl: 60, state: 'ended', after: 1, created: true },
    ];
    it.each(TABLE)('scope $scope, ttl $ttl s, holder $state, $after ms later: created $created', async (row) => {
      const first = await c.queue.enqueue({
        class: 'email',
        key: 'k',
        keyScope: row.scope,
        ...(row.ttl === undefined ? {} : { keyTtlSeconds: row.ttl }),
      });
      if (row.state === 'ended') await fail(first.id);
      c.clock.advance(row.after);
      const again = await c.queue.enqueue({ class: 'email', key: 'k' });
      expect(again.created).toBe(row.created);
      expect(again.id === first.id).toBe(!row.created);
      const holders = await c.store.jobListByKey({ key: 'k', class: 'email' });
      expect(holders.map((j) => j.id)).toEqual([again.id]);
    });

    it('refuses a scope or a lifetime without a key, and a lifetime that is not positive', async () => {
      await expect(c.enqueue({ keyScope: 'incomplete' })).rejects.toMatchObject({ code: 'INVALID_INPUT:KEY' });
      await expect(c.enqueue({ key: 'k', keyTtlSeconds: 0 })).rejects.toMatchObject({ code: 'INVALID_INPUT:KEY_TTL' });
      await expect(c.enqueue({ key: 'k', keyScope: 'run' as Scope })).rejects.toMatchObject({
        code: 'INVALID_INPUT:KEY_SCOPE',
      });
    });
  });
}
