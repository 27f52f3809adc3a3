import { describe, expect, it } from 'vitest';
import type { AttemptCost, Settlement } from '../../../src/store/types.js';
import { claimJobs } from '../../helpers/fenced-writes.js';
import { fixedDelay, HOUR, LEASE_MS, OWNER_A, OWNER_B, SWEEP, type Conformance } from './context.js';

const MIB = 1024 * 1024;
/** Figures exact in binary, so both drivers' sums and means compare equal. */
const cost = (cpuMs: number, peakMib: number): AttemptCost => ({ cpuMs, peakRssBytes: peakMib * MIB });
/** A take-back of a child killed for its memory. */
const kill = {
  errorCode: 'RESOURCE:MEMORY',
  errorDetail: 'over max_memory_mb',
  event: 'KILLED' as const,
  actor: 'supervisor',
  retryDelay: fixedDelay(0),
};
const costColumns = (attempt: { cpu_ms: number | null; peak_rss_bytes: number | null }) => [
  attempt.cpu_ms,
  attempt.peak_rss_bytes,
];

/** What each attempt cost: written by the write that ends it, fenced like it, and ranked for operators. */
export function costSuites(c: Conformance): void {
  const { enqueue, claimOne } = c;
  describe('what attempts cost', () => {
    it("writes each attempt's cost with its outcome, whatever the verdict, and none where nobody measured it", async () => {
      const ids = [
        await enqueue(),
        await enqueue({ maxRetries: 3 }),
        await enqueue(),
        await enqueue(),
        await enqueue(),
      ];
      const jobs = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 5, leaseMs: LEASE_MS });
      expect(jobs.map((j) => j.id)).toEqual(ids);
      const fail = (retryable: boolean) => ({
        type: 'fail' as const,
        error: { code: 'X:Y', detail: 'no', retryable },
        retryDelayMs: 10,
      });
      const verdicts: [Settlement['verdict'], AttemptCost | undefined][] = [
        [{ type: 'complete', result: null }, cost(12.5, 80)],
        [fail(true), cost(0.25, 64)],
        [fail(false), cost(1000, 512)],
        [{ type: 'release', reason: 'stopped' }, cost(3, 70)],
        [{ type: 'complete', result: null }, undefined],
      ];
      const { settled } = await c.store.jobsSettle({
        settlements: jobs.map((job, i) => ({
          id: job.id,
          leaseToken: job.leaseToken,
          startedAt: c.clock.now(),
          verdict: verdicts[i]![0],
          cost: verdicts[i]![1],
        })),
      });
      expect(settled.map((s) => s.held && s.status)).toEqual(['SUCCEEDED', 'QUEUED', 'FAILED', 'QUEUED', 'SUCCEEDED']);
      const written = await Promise.all(
        ids.map(async (id) => (await c.store.attemptList({ jobId: id })).map(costColumns)),
      );
      expect(written).toEqual([
        [[12.5, 80 * MIB]],
        [[0.25, 64 * MIB]],
        [[1000, 512 * MIB]],
        [[3, 70 * MIB]],
        [[null, null]],
      ]);
    });

    it("writes no cost for a stale settlement: a zombie's figures land nowhere", async () => {
      const id = await enqueue();
      const zombie = await claimOne(OWNER_A);
      await c.store.jobStart({ id, leaseToken: zombie.leaseToken, leaseMs: LEASE_MS });
      c.clock.advance(LEASE_MS + 1);
      await c.store.leasesRecoverExpired({ ...SWEEP, retryDelay: fixedDelay(0), limit: 10 });
      const holder = await claimOne(OWNER_B);

      const stale: Settlement = {
        id,
        leaseToken: zombie.leaseToken,
        startedAt: null,
        verdict: { type: 'complete', result: '"zombie"' },
        cost: cost(99, 999),
      };
      expect((await c.store.jobsSettle({ settlements: [stale] })).settled).toEqual([{ id, held: false }]);
      expect((await c.store.attemptList({ jobId: id })).map((a) => [a.status, ...costColumns(a)])).toEqual([
        ['FAILED', null, null],
        ['RUNNING', null, null],
      ]);

      await c.store.jobsSettle({
        settlements: [
          {
            id,
            leaseToken: holder.leaseToken,
            startedAt: null,
            verdict: { type: 'complete', result: null },
            cost: cost(2, 90),
          },
        ],
      });
      expect((await c.store.attemptList({ jobId: id })).map(costColumns)).toEqual([
        [null, null],
        [2, 90 * MIB],
      ]);
    });

    it("writes the culprit's cost on the culprit's attempt only when its owner's jobs are taken back", async () => {
      const culprit = await enqueue();
      const victim = await enqueue();
      const held = await claimJobs(c.store, { classes: ['email'], ownerId: OWNER_A, limit: 2, leaseMs: LEASE_MS });
      for (const job of held) await c.store.jobStart({ id: job.id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      await c.store.leasesRecoverByOwner({
        ...kill,
        ownerId: OWNER_A,
        culpritJobId: culprit,
        culpritCost: cost(750, 600),
      });
      expect(
        (await c.store.attemptList({ jobId: culprit })).map((a) => [a.status, a.error_code, ...costColumns(a)]),
      ).toEqual([['FAILED', 'RESOURCE:MEMORY', 750, 600 * MIB]]);
      expect(
        (await c.store.attemptList({ jobId: victim })).map((a) => [a.status, a.error_code, ...costColumns(a)]),
      ).toEqual([['CANCELLED', 'LEASE:RELEASED', null, null]]);
    });

    it('ranks the classes and attempts measured in the window by CPU and by peak memory, whatever their outcome', async () => {
      const settle = async (jobClass: string, spent: AttemptCost | undefined) => {
        const [job] = await claimJobs(c.store, { classes: [jobClass], ownerId: OWNER_A, limit: 1, leaseMs: LEASE_MS });
        await c.store.jobsSettle({
          settlements: [
            {
              id: job!.id,
              leaseToken: job!.leaseToken,
              startedAt: null,
              verdict: { type: 'complete', result: null },
              cost: spent,
            },
          ],
        });
        return job!.id;
      };
      for (const jobClass of ['burn', 'burn', 'burn', 'hungry', 'hungry', 'noop', 'noop', 'old'])
        await enqueue({ class: jobClass });
      const hog = await enqueue({ class: 'hog', maxRetries: 1 });
      await settle('old', cost(5000, 4000)); // outside the window
      c.clock.advance(2 * HOUR);
      const since = c.clock.now() - HOUR;
      // the third burn attempt was not measured: it is in no ranking
      const burn = [
        await settle('burn', cost(400, 70)),
        await settle('burn', cost(600, 72)),
        await settle('burn', undefined),
      ];
      const hungry = [await settle('hungry', cost(20, 300)), await settle('hungry', cost(30, 500))];
      await settle('noop', cost(0.5, 60));
      await settle('noop', cost(0.25, 61));
      // a child killed for its memory: the culprit's attempt FAILED (the job queued for a retry), then a retry that succeeds
      await claimJobs(c.store, { classes: ['hog'], ownerId: OWNER_B, limit: 1, leaseMs: LEASE_MS });
      expect(
        await c.store.leasesRecoverByOwner({
          ...kill,
          ownerId: OWNER_B,
          culpritJobId: hog,
          culpritCost: cost(250, 900),
        }),
      ).toMatchObject([{ id: hog, status: 'QUEUED' }]);
      expect(await settle('hog', cost(1, 65))).toBe(hog);
      const now = c.clock.now();

      const ranking = await c.store.statsCost({ since, limit: 2 });
      expect(ranking.by_class).toEqual([
        { class: 'burn', attempts: 2, cpu_ms: 1000, mean_cpu_ms: 500, max_peak_rss_bytes: 72 * MIB },
        { class: 'hog', attempts: 2, cpu_ms: 251, mean_cpu_ms: 125.5, max_peak_rss_bytes: 900 * MIB },
        { class: 'hungry', attempts: 2, cpu_ms: 50, mean_cpu_ms: 25, max_peak_rss_bytes: 500 * MIB },
        { class: 'noop', attempts: 2, cpu_ms: 0.75, mean_cpu_ms: 0.375, max_peak_rss_bytes: 61 * MIB },
      ]);
      const row = (jobId: number, jobClass: string, spent: AttemptCost, attempt = 1, status = 'SUCCEEDED') => ({
        job_id: jobId,
        attempt,
        class: jobClass,
        status,
        cpu_ms: spent.cpuMs,
        peak_rss_bytes: spent.peakRssBytes,
        finished_at: now,
      });
      expect(ranking.top_cpu).toEqual([row(burn[1]!, 'burn', cost(600, 72)), row(burn[0]!, 'burn', cost(400, 70))]);
      expect(ranking.top_rss).toEqual([
        row(hog, 'hog', cost(250, 900), 1, 'FAILED'),
        row(hungry[1]!, 'hungry', cost(30, 500)),
      ]);
      expect((await c.store.statsCost({ since, limit: 10 })).top_cpu.map((r) => [r.job_id, r.attempt])).toContainEqual([
        hog,
        2,
      ]);
      expect(await c.store.statsCost({ since: now + 1, limit: 2 })).toEqual({ by_class: [], top_cpu: [], top_rss: [] });
    });
  });
}
