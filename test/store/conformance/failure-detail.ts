import { describe, expect, it } from 'vitest';
import type { AttemptLogs, Settlement } from '../../../src/store/types.js';
import { droppedNote } from '../../../src/store/job-logs.js';
import { claimJobs } from '../../helpers/fenced-writes.js';
import { fixedDelay, LEASE_MS, OWNER_A, OWNER_B, SWEEP, type Conformance } from './context.js';

const STACK =
  'Error: the payment provider said no\n    at chargeCard (/srv/handlers/pay.mjs:12:11)\nCaused by: Error: 402';
const logs = (...messages: string[]): AttemptLogs => ({
  lines: messages.map((msg, i) => ({
    ts: 1000 + i,
    level: i === 0 ? 'info' : 'warn',
    msg,
    fields: i === 0 ? '{"step":1}' : null,
  })),
  dropped: 0,
});
const fail = (stack?: string): Settlement['verdict'] => ({
  type: 'fail',
  error: { code: 'PAY:DECLINED', detail: 'the payment provider said no', retryable: true, stack },
  retryDelayMs: 0,
});
const lines = async (c: Conformance, id: number) =>
  (await c.store.logList({ jobId: id })).map((l) => [l.attempt, l.seq, l.level, l.message, l.fields]);

/** Why an attempt failed, in full, and a job's own log lines: written with the outcome, fenced like it, deleted with the job. */
export function failureDetailSuites(c: Conformance): void {
  const { enqueue, claimOne } = c;
  describe('failure detail: stacks and job logs', () => {
    it("keeps a failed attempt's stack and each attempt's log lines, in order, whatever path the batch takes", async () => {
      const ids = [await enqueue({ maxRetries: 3 }), await enqueue(), await enqueue()];
      const jobs = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 3, leaseMs: LEASE_MS });
      const [failed, logged, silent] = jobs;
      const settlements: Settlement[] = [
        {
          id: failed!.id,
          leaseToken: failed!.leaseToken,
          startedAt: c.clock.now(),
          verdict: fail(STACK),
          logs: logs('charging', 'declined'),
        },
        {
          id: logged!.id,
          leaseToken: logged!.leaseToken,
          startedAt: c.clock.now(),
          verdict: { type: 'complete', result: null },
          claim: logged,
          logs: logs('one', 'two'),
        },
        {
          id: silent!.id,
          leaseToken: silent!.leaseToken,
          startedAt: c.clock.now(),
          verdict: { type: 'complete', result: null },
          claim: silent,
        },
      ];
      await c.store.jobsSettle({ settlements });
      expect((await c.store.attemptList({ jobId: ids[0]! })).map((a) => [a.status, a.error_stack])).toEqual([
        ['FAILED', STACK],
      ]);
      expect((await c.store.attemptList({ jobId: ids[1]! })).map((a) => a.error_stack)).toEqual([null]);
      expect(await lines(c, ids[0]!)).toEqual([
        [1, 0, 'info', 'charging', '{"step":1}'],
        [1, 1, 'warn', 'declined', null],
      ]);
      expect(await lines(c, ids[1]!)).toEqual([
        [1, 0, 'info', 'one', '{"step":1}'],
        [1, 1, 'warn', 'two', null],
      ]);
      expect(await lines(c, ids[2]!)).toEqual([]);

      // The second attempt's lines are its own.
      const again = await claimOne();
      expect(again.id).toBe(ids[0]);
      await c.store.jobsSettle({
        settlements: [
          {
            id: again.id,
            leaseToken: again.leaseToken,
            startedAt: null,
            verdict: { type: 'complete', result: null },
            claim: again,
            logs: logs('retry'),
          },
        ],
      });
      expect((await lines(c, ids[0]!)).map(([attempt, seq, , message]) => [attempt, seq, message])).toEqual([
        [1, 0, 'charging'],
        [1, 1, 'declined'],
        [2, 0, 'retry'],
      ]);
    });

    it('says first, in a line of its own, how many lines the cap dropped', async () => {
      const id = await enqueue();
      const job = await claimOne();
      const kept: AttemptLogs = { ...logs('last but one', 'last'), dropped: 37 };
      await c.store.jobsSettle({
        settlements: [
          { id, leaseToken: job.leaseToken, startedAt: null, verdict: { type: 'complete', result: null }, logs: kept },
        ],
      });
      expect((await c.store.logList({ jobId: id })).map((l) => [l.seq, l.level, l.message])).toEqual([
        [0, 'warn', droppedNote(37)],
        [1, 'info', 'last but one'],
        [2, 'warn', 'last'],
      ]);
    });

    it("writes nothing of a zombie's: neither its stack nor its log lines", async () => {
      const id = await enqueue();
      const zombie = await claimOne(OWNER_A);
      c.clock.advance(LEASE_MS + 1);
      await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay: fixedDelay(0), limit: 10 });
      await claimOne(OWNER_B);
      const stale: Settlement = {
        id,
        leaseToken: zombie.leaseToken,
        startedAt: null,
        verdict: fail(STACK),
        logs: logs('from the grave'),
      };
      expect((await c.store.jobsSettle({ settlements: [stale] })).settled).toEqual([{ id, held: false }]);
      expect((await c.store.attemptList({ jobId: id })).map((a) => a.error_stack)).toEqual([null, null]);
      expect(await lines(c, id)).toEqual([]);
    });

    it("writes a take-back's story on the attempts it ends, and retention deletes the lines with their job", async () => {
      const id = await enqueue({ maxRetries: 0 });
      const job = await claimOne(OWNER_A);
      await c.store.jobStart({ id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      const story = 'child 123 crashed: signal SIGKILL\n\nlast resident set: 80.0 MiB';
      await c.store.leasesRecoverByOwner({
        errorCode: 'WORKER:CRASHED',
        errorDetail: 'child crashed',
        errorStack: story,
        event: 'RECOVERED',
        actor: 'supervisor',
        retryDelay: fixedDelay(0),
        ownerId: OWNER_A,
        culpritJobId: id,
      });
      expect((await c.store.attemptList({ jobId: id })).map((a) => [a.status, a.error_stack])).toEqual([
        ['FAILED', story],
      ]);

      const logged = await enqueue();
      const held = await claimOne();
      await c.store.jobsSettle({
        settlements: [
          {
            id: logged,
            leaseToken: held.leaseToken,
            startedAt: null,
            verdict: { type: 'complete', result: null },
            logs: logs('a', 'b'),
          },
        ],
      });
      c.clock.advance(1000);
      expect(await c.store.jobsPruneBatch({ status: 'SUCCEEDED', finishedBefore: c.clock.now(), limit: 10 })).toBe(1);
      expect(await lines(c, logged)).toEqual([]);
    });
  });
}
