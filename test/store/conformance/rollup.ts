import { describe, expect, it } from 'vitest';
import { POSTGRES_ROLLUP_GRACE_MS } from '../../../src/store/postgres/stats-rollup.js';
import { SQLITE_ROLLUP_GRACE_MS } from '../../../src/store/sqlite/stats-rollup.js';
import { PostgresStore } from '../../../src/store/postgres/store.js';
import {
  COST_TOP_KEPT,
  floorMinute,
  MINUTE_MS,
  ROLLUP_KEEP_MS,
  ROLLUP_STRIDE_MS,
} from '../../../src/store/stats-window.js';
import type { AttemptCost, Settlement, Store } from '../../../src/store/types.js';
import { collectStats } from '../../../src/reports/stats.js';
import { claimJobs } from '../../helpers/fenced-writes.js';
import { LEASE_MS, OWNER_A, type Conformance } from './context.js';
import type { OpenSame } from './classes.js';

const MIB = 1024 * 1024;
/** Figures exact in binary, so sums compare equal whatever order they are added in. */
const cost = (n: number): AttemptCost => ({ cpuMs: (n % 37) * 0.25 + 1, peakRssBytes: (64 + (n % 23)) * MIB });
const ALL_MINUTES = Math.ceil(ROLLUP_KEEP_MS / MINUTE_MS) + 10;
/** The minutes a first roll-up at `now` sums, up to the driver's grace ago: one figure for each driver. */
const endedMinutes = (now: number) =>
  [SQLITE_ROLLUP_GRACE_MS, POSTGRES_ROLLUP_GRACE_MS].map(
    (grace) => (now - grace - floorMinute(now - ROLLUP_KEEP_MS)) / MINUTE_MS,
  );
/**
 * `minutes` is what a first roll-up at `now` sums on one of the drivers, or up to `shortByMs` less: on
 * PostgreSQL a roll-up's grace also covers each transaction it sees reading the jobs, and another supervisor's
 * look before its turn is one (the rest is summed by a later roll-up, once anything ends after it).
 */
function expectEndedMinutes(minutes: number, now: number, shortByMs = 0): void {
  expect(
    endedMinutes(now).some((ended) => minutes <= ended + 1e-9 && minutes >= ended - shortByMs / MINUTE_MS - 1e-9),
    `${minutes} minutes`,
  ).toBe(true);
}
/** How much longer than its own grace a roll-up beside another supervisor's look may stop short. */
const LOOK_BESIDE_MS = 10_000;

/** Every windowed read the rollup serves, as an operator would make them from `since` (`now`: the chart's last minute). */
async function windowedReads(store: Store, since: number, now: number) {
  return {
    cost: await store.statsCost({ since, limit: 10 }),
    costLong: await store.statsCost({ since, limit: COST_TOP_KEPT + 10 }),
    retries: await store.statsRetries({ since }),
    finished: await store.statsFinishedSince({ since }),
    byMinute: await store.statsFinishedByMinute({ since, until: Math.floor(now / MINUTE_MS) * MINUTE_MS + MINUTE_MS }),
  };
}

/** Claims up to `limit` jobs of `jobClass` and completes them, each with `spent`; the jobs it completed. */
async function completeSome(store: Store, jobClass: string, limit: number, spent: AttemptCost) {
  const ending = await claimJobs(store, { classes: [jobClass], ownerId: OWNER_A, limit, leaseMs: LEASE_MS });
  await store.jobsSettle({
    settlements: ending.map((job) => ({
      id: job.id,
      leaseToken: job.leaseToken,
      startedAt: null,
      verdict: { type: 'complete', result: null },
      cost: spent,
    })),
  });
  return ending;
}

/** The stats rollup (src/store/stats-window.ts): summed minutes answer as the jobs they sum would. */
export function rollupSuites(c: Conformance, openSame: OpenSame): void {
  /**
   * Over six minutes: each minute's jobs of two classes succeed, fail for good, fail and retry, are handed back, or
   * are cancelled queued; a cancelled parent cancels one dependent and queues another that runs anyway.
   */
  async function sixMinutesOfJobs(): Promise<void> {
    let n = 0;
    const settleAll = async (jobClass: string, verdict: (i: number) => Settlement['verdict']) => {
      const held = await claimJobs(c.store, { classes: [jobClass], ownerId: OWNER_A, limit: 1_000, leaseMs: LEASE_MS });
      await c.store.jobsSettle({
        settlements: held.map((job, i) => ({
          id: job.id,
          leaseToken: job.leaseToken,
          startedAt: null,
          verdict: verdict(i),
          cost: cost(n++),
        })),
      });
    };
    for (let minute = 0; minute < 6; minute++) {
      // the third minute has more attempts than the rollup keeps of a minute's costliest
      const count = minute === 2 ? COST_TOP_KEPT + 20 : 7;
      await c.queue.enqueueMany(
        Array.from({ length: count }, (_, i) => ({ class: i % 2 === 0 ? 'even' : 'odd', payload: {}, maxRetries: 1 })),
      );
      // one is handed back: the next minute's claim takes it first, its second attempt its first spent
      await settleAll('even', (i) =>
        i === 3 ? { type: 'release', reason: 'stopped' } : { type: 'complete', result: null },
      );
      c.clock.advance(13_000);
      const fail = (retryable: boolean) => ({
        type: 'fail' as const,
        error: { code: 'E:X', detail: 'no', retryable },
        retryDelayMs: 0,
      });
      await settleAll('odd', (i) =>
        i % 3 === 0 ? fail(false) : i % 3 === 1 ? fail(true) : { type: 'complete', result: null },
      );
      c.clock.advance(13_000);
      await settleAll('odd', () => ({ type: 'complete', result: null }));
      const [cancelled] = await c.queue.enqueueMany([
        { class: 'idle', payload: {}, ref: 'parent' },
        { class: 'idle', payload: {}, dependsOn: ['parent'] },
        { class: 'idle', payload: {}, dependsOn: ['parent'], onParentFailure: 'run' },
      ]);
      await c.store.jobCancel({ id: cancelled!.id, actor: 'test' });
      c.clock.advance(MINUTE_MS - 26_000);
    }
  }

  describe('the stats rollup', () => {
    it('answers every windowed read as the jobs alone do: a partial first minute and the minutes not summed yet are read from the jobs', async () => {
      await sixMinutesOfJobs();
      const windows = [c.clock.now() - 5.5 * MINUTE_MS, c.clock.now() - 10 * MINUTE_MS, c.clock.now() - 30_000];
      const fromJobs = await Promise.all(windows.map((since) => windowedReads(c.store, since, c.clock.now())));
      expect(fromJobs[0]!.cost.top_cpu).toHaveLength(10);
      expect(fromJobs[0]!.costLong.top_cpu).toHaveLength(COST_TOP_KEPT + 10);
      // each minute's cancelled parent and the dependent it cancelled; the one that runs anyway is only queued
      expect(fromJobs[1]!.finished).toContainEqual({ status: 'CANCELLED', count: 12 });

      // what ended less than a grace ago waits for a later roll-up
      expectEndedMinutes(await c.store.statsRollUp({ maxMinutes: ALL_MINUTES }), c.clock.now());
      expect(await c.store.statsRollUp({ maxMinutes: ALL_MINUTES })).toBe(0);
      expect(await Promise.all(windows.map((since) => windowedReads(c.store, since, c.clock.now())))).toEqual(fromJobs);
    });

    it('sums each minute once when supervisors roll up side by side, and drops minutes older than it keeps', async () => {
      await sixMinutesOfJobs();
      const since = c.clock.now() - 10 * MINUTE_MS;
      const fromJobs = await windowedReads(c.store, since, c.clock.now());
      const other = await openSame(c.store, c.clock);
      try {
        const rolled = await Promise.all(
          [c.store, other, c.store, other].map((store) => store.statsRollUp({ maxMinutes: 700 })),
        );
        expectEndedMinutes(
          rolled.reduce((sum, minutes) => sum + minutes, 0),
          c.clock.now(),
          LOOK_BESIDE_MS,
        );
        expect(await windowedReads(other, since, c.clock.now())).toEqual(fromJobs);
      } finally {
        await other.close();
      }
      // a day later the minutes are dropped; a window reaching back that far reads them from the jobs again
      c.clock.advance(ROLLUP_KEEP_MS + MINUTE_MS);
      await c.store.statsRollUp({ maxMinutes: ALL_MINUTES });
      expect(await windowedReads(c.store, since, c.clock.now())).toEqual(fromJobs);
      expect((await c.store.statsRetries({ since: c.clock.now() - ROLLUP_KEEP_MS })).length).toBe(0);
    });

    it('counts every finished job once while roll-ups split its minutes: none missed, none twice, at any boundary', async () => {
      c.clock.advance(MINUTE_MS - (c.clock.now() % MINUTE_MS) + 5_000);
      const since = c.clock.now();
      await c.store.statsRollUp({ maxMinutes: ALL_MINUTES });
      const succeeded = new Map<number, number>();
      let total = 0;
      // Every 7 s for four minutes: jobs end, then a roll-up; the drivers' graces put its end mid-minute.
      for (let step = 0; step < 35; step++) {
        await c.queue.enqueueMany(Array.from({ length: 1 + (step % 3) }, () => ({ class: 'email', payload: {} })));
        const ending = await completeSome(c.store, 'email', 10, cost(step));
        const minute = floorMinute(c.clock.now());
        succeeded.set(minute, (succeeded.get(minute) ?? 0) + ending.length);
        total += ending.length;
        c.clock.advance(step % 2 === 0 ? SQLITE_ROLLUP_GRACE_MS : 7_000);
        await c.store.statsRollUp({ maxMinutes: ALL_MINUTES });
        expect(await c.store.statsFinishedSince({ since })).toEqual([{ status: 'SUCCEEDED', count: total }]);
        const byMinute = await c.store.statsFinishedByMinute({ since, until: floorMinute(c.clock.now()) + MINUTE_MS });
        expect(byMinute).toEqual([...succeeded].map(([minute, count]) => ({ minute, status: 'SUCCEEDED', count })));
        const { by_class } = await c.store.statsCost({ since, limit: 10 });
        expect(by_class.map((row) => [row.class, row.attempts])).toEqual([['email', total]]);
      }
    });

    it('sums at most one stride at a time: supervisors ticking side by side do not split it into pieces', async () => {
      const grace = c.store instanceof PostgresStore ? POSTGRES_ROLLUP_GRACE_MS : SQLITE_ROLLUP_GRACE_MS;
      await c.enqueue();
      await completeSome(c.store, 'email', 1, cost(1));
      const since = floorMinute(c.clock.now());
      // the first roll-up ends just before the job did; the next tick, 100 ms later, would take it alone
      c.clock.advance(grace - 50);
      expect(await c.store.statsRollUp({ maxMinutes: ALL_MINUTES })).toBeGreaterThan(0);
      c.clock.advance(100);
      expect(await c.store.statsRollUp({ maxMinutes: ALL_MINUTES })).toBe(0);
      // the reads count it meanwhile, from the jobs; a stride later it is summed
      expect(await c.store.statsFinishedSince({ since })).toEqual([{ status: 'SUCCEEDED', count: 1 }]);
      c.clock.advance(ROLLUP_STRIDE_MS);
      expect(await c.store.statsRollUp({ maxMinutes: ALL_MINUTES })).toBeGreaterThan(0);
      expect(await c.store.statsFinishedSince({ since })).toEqual([{ status: 'SUCCEEDED', count: 1 }]);
    });

    it("the report's windows start at a minute's start: a job of the first minute counts whole, rolled up or not", async () => {
      // now is 90 s past a minute's start: the last minute's window begins 30 s into that minute
      c.clock.advance(MINUTE_MS - (c.clock.now() % MINUTE_MS));
      const start = c.clock.now();
      await c.queue.enqueue({ class: 'email', payload: {} });
      c.clock.advance(5_000);
      await completeSome(c.store, 'email', 1, cost(1));
      c.clock.advance(85_000);
      const retention = {
        succeeded_days: 30,
        failed_days: 90,
        cancelled_days: 30,
        batch_size: 100,
        interval_seconds: 60,
      };
      const report = () => collectStats(c.store, { now: c.clock.now(), retention, windowMs: 3_600_000 });
      const fromJobs = await report();
      expect(fromJobs.throughput.last_minute).toEqual({
        window_ms: 90_000,
        SUCCEEDED: 1,
        FAILED: 0,
        CANCELLED: 0,
        total: 1,
        per_second: 0.0111,
      });
      expect(fromJobs.throughput.last_hour.window_ms).toBe(c.clock.now() - floorMinute(c.clock.now() - 3_600_000));
      expect(fromJobs.retries.since).toBe(floorMinute(c.clock.now() - 3_600_000));
      expect(fromJobs.window_ms).toBe(c.clock.now() - fromJobs.retries.since);
      expect(fromJobs.errors.since).toBe(fromJobs.retries.since);
      expect(fromJobs.cost).toMatchObject({
        since: fromJobs.retries.since,
        window_ms: fromJobs.throughput.last_hour.window_ms,
      });
      expect(fromJobs.cost.by_cpu).toMatchObject([{ class: 'email', attempts: 1 }]);
      expect(start).toBe(floorMinute(c.clock.now() - MINUTE_MS));

      await c.store.statsRollUp({ maxMinutes: ALL_MINUTES });
      expect(await report()).toEqual(fromJobs);
    });
  });
}
