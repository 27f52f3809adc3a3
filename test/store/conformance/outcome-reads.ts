import { afterEach, describe, expect, it } from 'vitest';
import { NotFoundError, QueueClosedError, WaitTimeoutError } from '../../../src/errors.js';
import type { Outcome } from '../../../src/queue/outcome-streams.js';
import { OUTCOMES_START, outcomeOf } from '../../../src/store/outcome-rows.js';
import { claimJobs, completeIfHeld, failIfHeld, releaseIfHeld } from '../../helpers/fenced-writes.js';
import { waitFor } from '../../helpers/wait.js';
import { OWNER_A, type Conformance } from './context.js';

const upstream = (retryable: boolean) => ({ code: 'UPSTREAM:DOWN', detail: 'down', retryable });

/** The outcomes' reads (waitFor, events) and the Queue's shared listener over them, on a real store. */
export function outcomeReadSuites(c: Conformance): void {
  const { enqueue, claimOne } = c;

  /**
   * The jobs end in the order given, those cancelled first (while queued): `ok` succeeds, `failed` fails for
   * good (its error's code UPSTREAM:DOWN). Every other job claimed meanwhile goes back.
   */
  async function end(...steps: [number, 'ok' | 'failed' | 'cancel'][]): Promise<void> {
    for (const [id, how] of steps) if (how === 'cancel') await c.store.jobCancel({ id, actor: 'test' });
    const held = await claimJobs(c.store, { classes: ['email', 'sms'], ownerId: OWNER_A, limit: 100, leaseMs: 30_000 });
    for (const [id, how] of steps) {
      const job = held.find((h) => h.id === id);
      if (how === 'ok') await completeIfHeld(c.store, { ...job!, result: '{"ok":true}' });
      if (how === 'failed') await failIfHeld(c.store, { ...job!, error: upstream(false), retryDelayMs: 0 });
    }
    const ended = new Set(steps.map(([id]) => id));
    for (const job of held.filter((h) => !ended.has(h.id))) await releaseIfHeld(c.store, { ...job, reason: 'test' });
  }

  /** The next `count` outcomes of an iterator. */
  async function take(iterator: AsyncIterator<Outcome>, count: number): Promise<Outcome[]> {
    const taken: Outcome[] = [];
    while (taken.length < count) {
      const next = await iterator.next();
      if (next.done === true) break;
      taken.push(next.value);
    }
    return taken;
  }

  describe('outcomes', () => {
    afterEach(() => c.queue.close());

    it('reads the jobs waited for that ended, in one read, and no other', async () => {
      const [ok, failed, open] = [await enqueue(), await enqueue({ maxRetries: 0 }), await enqueue()];
      await end([ok, 'ok'], [failed, 'failed']);
      const ended = await c.store.jobsEnded({ ids: [ok, failed, open, 424242] });
      expect(ended.map((job) => [job.id, job.status]).sort()).toEqual([
        [ok, 'SUCCEEDED'],
        [failed, 'FAILED'],
      ]);
      expect(await c.store.jobsEnded({ ids: [] })).toEqual([]);
    });

    it('reads terminal events in order, after a position, a page at a time; a retry and a cancel request are none', async () => {
      expect(await c.store.outcomeLatest()).toEqual(OUTCOMES_START);
      const ok = await enqueue();
      const retried = await enqueue({ class: 'sms', maxRetries: 1 });
      const held = await enqueue();
      const queued = await enqueue();
      const first = await claimOne(OWNER_A, ['sms']);
      await failIfHeld(c.store, { ...first, error: upstream(true), retryDelayMs: 0 });
      await end([ok, 'ok']);
      const holding = await claimOne();
      expect(holding.id).toBe(held);
      await c.store.jobCancel({ id: held, actor: 'test' });
      await end([queued, 'cancel'], [retried, 'failed']);

      // PostgreSQL reads below every transaction still open on the server (another test's, say): wait for it
      const rows = await waitFor('four terminal events', async () => {
        const read = await c.store.outcomeEventsAfter({ after: OUTCOMES_START, limit: 10 });
        return read.length === 4 && read;
      });
      expect(rows.map((row) => [row.job_id, row.event, row.class])).toEqual([
        [ok, 'SUCCEEDED', 'email'],
        [held, 'CANCELLED', 'email'],
        [queued, 'CANCELLED', 'email'],
        [retried, 'FAILED', 'sms'],
      ]);
      expect(rows.map(outcomeOf)).toEqual([
        { status: 'SUCCEEDED', error_code: null },
        undefined,
        { status: 'CANCELLED', error_code: null },
        { status: 'FAILED', error_code: 'UPSTREAM:DOWN' },
      ]);
      expect(rows.map((row) => row.ts)).toEqual(rows.map(() => c.clock.now()));
      const last = rows.at(-1)!;
      expect(await c.store.outcomeLatest()).toEqual({ txid: last.txid, id: last.id });
      const [, second] = rows;
      const page = await c.store.outcomeEventsAfter({ after: { txid: second!.txid, id: second!.id }, limit: 1 });
      expect(page.map((row) => row.job_id)).toEqual([queued]);
      expect(await c.store.outcomeEventsAfter({ after: { txid: last.txid, id: last.id }, limit: 10 })).toEqual([]);
    });

    it('waitFor: a job already ended at once; a job that ends later once it ends; no job, a timeout, an abort', async () => {
      const done = await enqueue();
      await end([done, 'ok']);
      await expect(c.queue.waitFor(done)).resolves.toMatchObject({
        id: done,
        status: 'SUCCEEDED',
        result: { ok: true },
      });

      const later = await enqueue({ maxRetries: 0 });
      const waiting = c.queue.waitFor(later, { timeoutMs: 20_000 });
      const again = c.queue.waitFor(later);
      await end([later, 'failed']);
      const failed = { id: later, status: 'FAILED', error_code: 'UPSTREAM:DOWN' };
      await expect(waiting).resolves.toMatchObject(failed);
      await expect(again).resolves.toMatchObject(failed);

      await expect(c.queue.waitFor(424242)).rejects.toBeInstanceOf(NotFoundError);
      const open = await enqueue();
      await expect(c.queue.waitFor(open, { timeoutMs: 50 })).rejects.toMatchObject({
        name: 'WaitTimeoutError',
        code: 'TIMEOUT:WAIT',
        jobId: open,
      });
      const controller = new AbortController();
      const aborted = c.queue.waitFor(open, { signal: controller.signal });
      const reason = new Error('the caller went away');
      controller.abort(reason);
      await expect(aborted).rejects.toBe(reason);
      await expect(c.queue.waitFor(open, { signal: AbortSignal.abort() })).rejects.toMatchObject({
        name: 'AbortError',
      });
      await expect(c.queue.waitFor(0)).rejects.toMatchObject({ code: 'INVALID_INPUT:ID' });
      expect(new WaitTimeoutError(1, 5)).toBeInstanceOf(Error);
    });

    it('events: from the beginning, from a cursor, of some classes; from now by default', async () => {
      const [a, b, s] = [await enqueue(), await enqueue({ maxRetries: 0 }), await enqueue({ class: 'sms' })];
      const fromNow = c.queue.events();
      // a read after the iterator's own: it has its start, before the jobs end
      await c.store.outcomeLatest();
      await end([a, 'ok'], [s, 'ok'], [b, 'failed']);
      const all = await take(c.queue.events({ after: '0' }), 3);
      expect(all.map((o) => [o.id, o.class, o.status, o.error_code])).toEqual([
        [a, 'email', 'SUCCEEDED', null],
        [s, 'sms', 'SUCCEEDED', null],
        [b, 'email', 'FAILED', 'UPSTREAM:DOWN'],
      ]);
      expect(all.every((o) => o.finished_at === c.clock.now() && typeof o.cursor === 'string')).toBe(true);
      expect((await take(fromNow, 3)).map((o) => o.id)).toEqual([a, s, b]);

      const resumed = c.queue.events({ after: all[0]!.cursor, classes: ['email'] });
      expect((await take(resumed, 1)).map((o) => o.id)).toEqual([b]);
      const later = await enqueue();
      await end([later, 'ok']);
      expect((await take(resumed, 1)).map((o) => o.id)).toEqual([later]);
      await resumed.return?.();
      expect(await resumed.next()).toEqual({ value: undefined, done: true });
      expect(() => c.queue.events({ after: 'not a cursor' })).toThrow(
        expect.objectContaining({ code: 'INVALID_INPUT:CURSOR' }),
      );
    });

    it('events: an abort rejects the pending next() with its reason; close() ends the others and every wait', async () => {
      const controller = new AbortController();
      const aborted = c.queue.events({ signal: controller.signal });
      const pending = aborted.next();
      controller.abort(new Error('enough'));
      await expect(pending).rejects.toThrow('enough');
      expect(await aborted.next()).toEqual({ value: undefined, done: true });

      const open = await enqueue();
      const stream = c.queue.events({ after: '0' });
      const next = stream.next();
      const waiting = c.queue.waitFor(open);
      const ends = Promise.allSettled([next, waiting]);
      await c.queue.close();
      const [streamEnd, waitEnd] = await ends;
      expect(streamEnd).toEqual({ status: 'fulfilled', value: { value: undefined, done: true } });
      expect(waitEnd).toMatchObject({ status: 'rejected', reason: expect.any(QueueClosedError) });
      await expect(c.queue.waitFor(open)).rejects.toMatchObject({ code: 'QUEUE:CLOSED' });
    });
  });
}
