/**
 * The stats rollup, end to end: a real supervisor sums the minutes that
 * ended into the rollup (src/store/stats-window.ts) as it starts, and
 * `leasehold stats` reads them from it as it would from the jobs.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StatsReport } from '../../src/reports/stats.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { leaseholdJson } from '../cli/helpers.js';
import { TestClock } from '../helpers/clock.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { Queue } from '../../src/queue/queue.js';

useProcessGuard();
const newDir = tempDir('leasehold-rollup-');

describe('the stats rollup', () => {
  it('a supervisor sums the minutes that ended as it starts, and stats reads the same figures from them', async () => {
    const dir = newDir();
    const database = path.join(dir, 'queue.db');
    // Three jobs that finished three minutes ago, written with a clock set back.
    const clock = new TestClock(Date.now() - 3 * 60_000);
    const writer = await SqliteStore.open({ path: database, clock });
    await new Queue(writer, { clock }).enqueueMany([1, 2, 3].map((n) => ({ class: 'past', payload: { n } })));
    const held = await claimJobs(writer, { classes: ['past'], ownerId: 'test', limit: 3, leaseMs: 30_000 });
    await writer.jobsSettle({
      settlements: held.map((job) => ({
        id: job.id,
        leaseToken: job.leaseToken,
        startedAt: null,
        verdict: { type: 'complete', result: null },
        cost: { cpuMs: 2, peakRssBytes: 1 << 26 },
      })),
    });
    await writer.close();
    const before = await leaseholdJson<StatsReport>(['--db', database, 'stats']);

    const sup = await startSupervisor({ dir, logLevel: 'debug', classes: [{ name: 'noop', handler: 'succeed' }] });
    try {
      const rolled = await sup.waitForEvent('STATS_ROLLUP');
      expect(rolled.minutes).toBeGreaterThan(24 * 60);
      const db = new Database(database, { readonly: true });
      try {
        expect(db.prepare('SELECT class, status, spent, jobs FROM job_end_minutes').all()).toEqual([
          { class: 'past', status: 'SUCCEEDED', spent: 1, jobs: 3 },
        ]);
        expect(db.prepare('SELECT class, attempts, cpu_ms FROM attempt_cost_minutes').all()).toEqual([
          { class: 'past', attempts: 3, cpu_ms: 6 },
        ]);
      } finally {
        db.close();
      }
      const after = await leaseholdJson<StatsReport>(['--db', database, 'stats']);
      // The window is read up to now from a minute's start: its length (and per_second) grows between the two reads.
      const counts = ({ window_ms: _window, per_second: _rate, ...rest }: StatsReport['throughput']['last_hour']) =>
        rest;
      expect(counts(after.throughput.last_hour)).toEqual(counts(before.throughput.last_hour));
      expect(after.retries).toEqual({ ...before.retries, since: expect.any(Number) });
      expect(after.cost.by_cpu).toEqual(before.cost.by_cpu);
      expect(after.cost.slowest).toEqual(before.cost.slowest);
    } finally {
      await sup.stop();
    }
  });
});
