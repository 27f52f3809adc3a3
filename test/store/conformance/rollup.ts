import { describe, expect, it } from 'vitest';
import { ROLLUP_KEPT_MS, ROLLUP_PRUNE_MARGIN_MS } from '../../../src/store/rollup.js';
import type { AttemptCost, ClaimedJob, Settlement } from '../../../src/store/types.js';
import { claimJobs } from '../../helpers/fenced-writes.js';
import { fixedDelay, HOUR, LEASE_MS, OWNER_A, OWNER_B, SWEEP, type Conformance } from './context.js';

const MIB = 1024 * 1024;
/** Figures exact in binary, so that sums taken in any order compare equal. */
const cost = (cpuMs: number, peakMib: number): AttemptCost => ({ cpuMs, peakRssBytes: peakMib * MIB });
const fail = (code: string, retryable: boolean): Settlement['verdict'] => ({ type: 'fail', error: { code, detail: 'no', retryable }, retryDelayMs: 0 });

/**
 * The windowed reads add up the rollup's buckets and the raw rows at the
 * window's edges. The rollup answers only the last ROLLUP_KEPT_MS, so the
 * same window read again a day later is read from the raw rows alone: what
 * the statements read before the rollup. Both answers must be the same.
 */
export function rollupSuites(c: Conformance): void {
  const { enqueue, claimOne } = c;

  const claim = (owner: string, limit: number, classes = ['email', 'sms']) => claimJobs(c.store, { classes, ownerId: owner, limit, leaseMs: LEASE_MS });
  /** A verdict as a worker sends it; `blind`: with its claim record (PostgreSQL's one-statement path for successes). */
  const settle = (job: ClaimedJob, verdict: Settlement['verdict'], spent?: AttemptCost, blind = false): Settlement => ({
    id: job.id,
    leaseToken: job.leaseToken,
    startedAt: c.clock.now(),
    verdict,
    cost: spent,
    ...(blind ? { claim: job } : {}),
  });

  /** Every windowed read, with `since` (and `until` for the chart); statuses sorted where the statement does not. */
  const readAll = async (since: number, until: number) => ({
    retries: await c.store.statsRetries({ since }),
    errors: await c.store.statsTopErrors({ since, limit: 10 }),
    errorsByClass: await c.store.statsTopErrorsByClass({ since, limit: 2 }),
    cost: await c.store.statsCost({ since, limit: 3 }),
    costLong: await c.store.statsCost({ since, limit: 40 }),
    finished: (await c.store.statsFinishedSince({ since })).sort((a, b) => a.status.localeCompare(b.status)),
    minutes: await c.store.statsFinishedByMinute({ since, until }),
  });

  /** A history of every way a job finishes or an attempt ends, spread over buckets and minutes. */
  async function mixedHistory(): Promise<void> {
    for (let n = 0; n < 14; n++) await enqueue({ maxRetries: 2, payload: { n } });
    for (let n = 0; n < 4; n++) await c.queue.enqueue({ class: 'sms', payload: { n } });
    for (let round = 0; round < 3; round++) {
      const jobs = await claim(OWNER_A, 4);
      const verdicts: [Settlement['verdict'], AttemptCost | undefined, boolean][] = [
        [{ type: 'complete', result: null }, cost(1.25 + round, 80 + round), true],
        [{ type: 'complete', result: null }, cost(0.5, 64), false],
        [fail('E:RETRY', true), cost(2.5, 96), false],
        [{ type: 'release', reason: 'stopped' }, cost(0.25, 70), false],
      ];
      await c.store.jobsSettle({ settlements: jobs.map((job, i) => settle(job, verdicts[i]![0], verdicts[i]![1], verdicts[i]![2])) });
      c.clock.advance(7_300);
    }
    // A success with nobody's cost, and one written with its log lines (the general path on both drivers).
    const [plain, logged] = await claim(OWNER_A, 2);
    await c.store.jobsSettle({
      settlements: [settle(plain!, { type: 'complete', result: null }, undefined, true), { ...settle(logged!, { type: 'complete', result: null }, cost(4, 128)), logs: { lines: [], dropped: 0 } }],
    });
    c.clock.advance(11_000);
    // A failure for good, then an operator's retry: it leaves its bucket and finishes again later.
    const doomed = await claimOne(OWNER_A);
    await c.store.jobsSettle({ settlements: [settle(doomed, fail('E:FATAL', false), cost(8, 256))] });
    c.clock.advance(21_000);
    expect(await c.store.jobRetry({ id: doomed.id, actor: 'operator' })).toBe('queued');
    // A cancel of a running job, and an operator's cancels of queued jobs, one and by class.
    const running = await claimOne(OWNER_A);
    await c.store.jobCancel({ id: running.id, actor: 'operator' });
    await c.store.jobsSettle({ settlements: [settle(running, fail('CANCELLED', true), cost(0.75, 90))] });
    const queued = await enqueue();
    await c.store.jobCancel({ id: queued, actor: 'operator' });
    c.clock.advance(33_000);
    await c.store.jobCancelQueued({ class: 'sms', actor: 'operator' });
    // Take-backs: a lease that ran out, a dead child's jobs (a culprit and its victim), a shutdown's handback.
    const expired = await claimOne(OWNER_B);
    await c.store.jobStart({ id: expired.id, leaseToken: expired.leaseToken, leaseMs: LEASE_MS });
    c.clock.advance(LEASE_MS + 1);
    await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay: fixedDelay(0), limit: 10 });
    const [culprit] = await claim(OWNER_B, 2);
    const kill = { errorCode: 'RESOURCE:MEMORY', errorDetail: 'over', event: 'KILLED' as const, actor: 'supervisor', retryDelay: fixedDelay(0) };
    await c.store.leasesRecoverByOwner({ ...kill, ownerId: OWNER_B, culpritJobId: culprit!.id, culpritCost: cost(16, 600) });
    c.clock.advance(59_999);
    await claim(OWNER_A, 3);
    await c.store.leasesReleaseByOwner({ ownerId: OWNER_A, actor: 'supervisor', reason: 'shutdown' });
    // The retried job fails again, for good, and the rest succeed.
    for (const job of await claim(OWNER_A, 20)) {
      const verdict: Settlement['verdict'] = job.id === doomed.id ? fail('E:FATAL', false) : { type: 'complete', result: null };
      await c.store.jobsSettle({ settlements: [settle(job, verdict, cost(0.5 + (job.id % 4), 60 + job.id), true)] });
      c.clock.advance(2_500);
    }
  }

  describe('the rollup', () => {
    it('answers every windowed read as the raw rows do, after a history of every way a job ends', async () => {
      const start = c.clock.now();
      await mixedHistory();
      const end = c.clock.now() + 1;
      // Whole buckets and minutes, and windows that start and end inside them.
      const windows: [number, number][] = [
        [start - HOUR, end],
        [start + 5_001, end - 1_234],
        [start + 33_333, start + 125_000],
        [end - 20_000, end],
      ];
      const live = await Promise.all(windows.map(([since, until]) => readAll(since, until)));
      expect(live[0]!.finished.map((row) => row.status)).toEqual(['CANCELLED', 'FAILED', 'SUCCEEDED']);
      expect(live[0]!.cost.top_cpu).toHaveLength(3);
      expect(live[0]!.retries.some((bucket) => bucket.attempts > 1)).toBe(true);

      c.clock.advance(ROLLUP_KEPT_MS + HOUR);
      expect(await Promise.all(windows.map(([since, until]) => readAll(since, until)))).toEqual(live);
      // Retention deletes the buckets no window reads any more; the raw rows still answer.
      await c.store.rollupPrune({ before: c.clock.now() - ROLLUP_KEPT_MS - ROLLUP_PRUNE_MARGIN_MS });
      expect(await Promise.all(windows.map(([since, until]) => readAll(since, until)))).toEqual(live);
    });
  });
}
