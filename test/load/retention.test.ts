/**
 * Retention on a big table while a worker process keeps claiming: 50,000
 * finished jobs spread over 120 days, a policy of 30 / 90 / 30 days, and a
 * prune in batches that must delete exactly the jobs past their age (with
 * their attempts and events) without starving the worker.
 */
import { execa, type ResultPromise } from 'execa';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { closeLogger, createLogger } from '../../src/log.js';
import { Queue } from '../../src/queue/queue.js';
import type { RetentionPolicy } from '../../src/queue/retention.js';
import { Retention } from '../../supervisor/retention.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { TerminalStatus } from '../../src/store/types.js';
import { TestClock } from '../helpers/clock.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { claimJobs, completeIfHeld, failIfHeld } from '../helpers/fenced-writes.js';

const CLAIMER = fileURLToPath(new URL('../fixtures/prune-claimer.mjs', import.meta.url));
const DAY = 86_400_000;
const BATCHES = 50;
const PER_BATCH = 1_000;
const SPAN_DAYS = 120;
const LIVE_JOBS = 20_000;
const POLICY: RetentionPolicy = {
  succeeded_days: 30,
  failed_days: 90,
  cancelled_days: 30,
  batch_size: 1_000,
  interval_seconds: 300,
};
const newDir = tempDir();

interface ClaimerReport {
  claims: number[];
  lost: { id: number; code: string }[];
}

let claimer: ResultPromise | undefined;
afterEach(async () => {
  // A test that failed halfway must not leave its worker running.
  if (claimer !== undefined) {
    claimer.kill('SIGKILL');
    await claimer.catch(() => undefined);
  }
  claimer = undefined;
});

/** A read for the test's own bookkeeping (the store has no "all ids" query, on purpose). */
function count(store: SqliteStore, sql: string, ...bind: unknown[]): number {
  return (
    (store.connection
      .prepare(sql)
      .pluck()
      .get(...bind) as number) ?? 0
  );
}

describe('retention', () => {
  // 20 s alone; beside the chaos runs, under nice, filling 50,000 jobs took 70 s: the work, not a wait.
  it(
    'prunes 50,000 finished jobs by age, in batches, with their attempts and events, while a worker keeps claiming',
    { timeout: 150_000 },
    async () => {
      const dir = newDir();
      const database = dbPathIn(dir);
      const testStart = Date.now();
      const start = testStart - SPAN_DAYS * DAY;
      const step = (SPAN_DAYS * DAY) / BATCHES;
      const clock = new TestClock(start);
      const store = await SqliteStore.open({ path: database, clock });
      const queue = new Queue(store, { clock, actor: 'test' });

      // Fill: each batch finishes at its own time, 2.4 days apart: 70% SUCCEEDED, 20% FAILED, 10% CANCELLED.
      const finished = new Map<number, { status: TerminalStatus; at: number }>();
      for (let batch = 0; batch < BATCHES; batch++) {
        const at = start + batch * step;
        clock.advance(at - clock.now());
        const ids = (
          await queue.enqueueMany(
            Array.from({ length: PER_BATCH }, (_, i) => ({ class: 'old', payload: { batch, i }, maxRetries: 0 })),
          )
        ).map((j) => j.id);
        for (const id of ids.slice(0, PER_BATCH / 10)) {
          expect(await store.jobCancel({ id, actor: 'test' })).toBe('cancelled');
          finished.set(id, { status: 'CANCELLED', at });
        }
        const claimed = await claimJobs(store, {
          classes: ['old'],
          ownerId: 'filler',
          limit: PER_BATCH,
          leaseMs: 60_000,
        });
        expect(claimed).toHaveLength(PER_BATCH - PER_BATCH / 10);
        for (const [index, job] of claimed.entries()) {
          if (index % 9 < 7) {
            await completeIfHeld(store, { id: job.id, leaseToken: job.leaseToken, result: '{"ok":true}' });
            finished.set(job.id, { status: 'SUCCEEDED', at });
          } else {
            const outcome = await failIfHeld(store, {
              id: job.id,
              leaseToken: job.leaseToken,
              error: { code: 'FILL:BROKEN', detail: 'filler failure', retryable: false },
              retryDelayMs: 0,
            });
            expect(outcome.status).toBe('FAILED');
            finished.set(job.id, { status: 'FAILED', at });
          }
        }
      }
      expect(finished.size).toBe(BATCHES * PER_BATCH);
      clock.advance(testStart - clock.now());
      const now = clock.now();

      // What must go: finished strictly before now - days, per status.
      const days = { SUCCEEDED: POLICY.succeeded_days, FAILED: POLICY.failed_days, CANCELLED: POLICY.cancelled_days };
      const doomed = new Set(
        [...finished].filter(([, job]) => job.at < now - days[job.status] * DAY).map(([id]) => id),
      );
      const expected = { SUCCEEDED: 0, FAILED: 0, CANCELLED: 0 };
      for (const id of doomed) expected[finished.get(id)!.status] += 1;
      // The boundaries fall between batches, and every status has jobs on both sides.
      expect(expected).toEqual({ SUCCEEDED: 38 * 700, FAILED: 13 * 200, CANCELLED: 38 * 100 });
      const doomedList = [...doomed].join(',');
      // One attempt per claimed job; events: ENQUEUED, STARTED (carrying the claim), SUCCEEDED|FAILED, or ENQUEUED, CANCELLED.
      const claimedDoomed = expected.SUCCEEDED + expected.FAILED;
      expect(count(store, `SELECT count(*) FROM job_attempts WHERE job_id IN (${doomedList})`)).toBe(claimedDoomed);
      expect(count(store, `SELECT count(*) FROM job_events WHERE job_id IN (${doomedList})`)).toBe(
        3 * claimedDoomed + 2 * expected.CANCELLED,
      );

      // Work for the worker: jobs due now, of another class.
      for (let i = 0; i < LIVE_JOBS; i += 5_000)
        await queue.enqueueMany(Array.from({ length: 5_000 }, (_, n) => ({ class: 'live', payload: { n: i + n } })));

      const logFile = join(dir, 'retention.log');
      const logger = createLogger({
        level: 'debug',
        file: logFile,
        maxSizeMb: 10,
        maxFiles: 1,
        supervisorId: 'test',
        console: false,
      });
      const retention = new Retention({ store, logger, clock, policy: POLICY });

      const dryRun = await retention.prune({ dryRun: true });
      expect(Object.fromEntries(dryRun.by_status.map((line) => [line.status, line.count]))).toEqual(expected);
      expect(count(store, 'SELECT count(*) FROM jobs')).toBe(BATCHES * PER_BATCH + LIVE_JOBS);

      const worker = execa('node', [CLAIMER, database, 'live', 'worker-1'], {
        reject: false,
        buffer: { stdout: true },
      });
      claimer = worker;
      await waitFor(
        'the worker to claim its first job',
        () => count(store, "SELECT count(*) FROM jobs WHERE class = 'live' AND status <> 'QUEUED'") > 0,
        {
          timeoutMs: 15_000,
        },
      );

      const pruneStarted = Date.now();
      const report = await retention.prune();
      const pruneEnded = Date.now();
      worker.kill('SIGTERM');
      const result = await worker;
      expect(result.exitCode).toBe(0);
      const lines = String(result.stdout).trim().split('\n');
      const claims = JSON.parse(lines[lines.length - 1]!) as ClaimerReport;
      await closeLogger(logger);

      // Exactly the right jobs went.
      expect(report.complete).toBe(true);
      expect(Object.fromEntries(report.by_status.map((line) => [line.status, line.count]))).toEqual(expected);
      expect(report.total).toBe(doomed.size);
      const left = store.connection
        .prepare("SELECT id FROM jobs WHERE class = 'old' ORDER BY id")
        .pluck()
        .all() as number[];
      const survivors = [...finished.keys()].filter((id) => !doomed.has(id)).sort((a, b) => a - b);
      expect(left).toEqual(survivors);
      // ...with their attempts and events, and nothing else.
      expect(count(store, `SELECT count(*) FROM job_attempts WHERE job_id IN (${doomedList})`)).toBe(0);
      expect(count(store, `SELECT count(*) FROM job_events WHERE job_id IN (${doomedList})`)).toBe(0);
      expect(count(store, 'SELECT count(*) FROM job_attempts WHERE job_id NOT IN (SELECT id FROM jobs)')).toBe(0);
      expect(count(store, 'SELECT count(*) FROM job_events WHERE job_id NOT IN (SELECT id FROM jobs)')).toBe(0);
      expect(
        count(store, `SELECT count(*) FROM job_attempts WHERE job_id IN (${survivors.join(',')})`),
      ).toBeGreaterThan(0);
      expect(count(store, "SELECT count(*) FROM jobs WHERE class = 'live'")).toBe(LIVE_JOBS);

      // The worker kept claiming while the prune ran, and lost nothing.
      const during = claims.claims.filter((at) => at >= pruneStarted && at <= pruneEnded);
      console.log(
        `prune: ${report.total} jobs in ${pruneEnded - pruneStarted} ms; the worker claimed ${during.length} jobs meanwhile (${claims.claims.length} in all)`,
      );
      expect(claims.lost).toEqual([]);
      expect(during.length).toBeGreaterThan(0);
      // ...and was not starved: it claimed in most 200 ms slices of the prune.
      const slices = Math.max(1, Math.floor((pruneEnded - pruneStarted) / 200));
      const busySlices = new Set(during.map((at) => Math.min(slices - 1, Math.floor((at - pruneStarted) / 200)))).size;
      expect(busySlices).toBeGreaterThanOrEqual(Math.ceil(slices / 2));

      // The amount deleted is logged.
      const records = readFileSync(logFile, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const logged = records.find((r) => r.event === 'RETENTION' && r.deleted === doomed.size);
      expect(logged).toMatchObject({
        succeeded: expected.SUCCEEDED,
        failed: expected.FAILED,
        cancelled: expected.CANCELLED,
      });

      // Nothing is left to prune.
      expect((await retention.prune({ dryRun: true })).total).toBe(0);
      await store.close();
    },
  );

  it('stop() during a prune ends it after the batch in flight', async () => {
    const clock = new TestClock(Date.now() - 40 * DAY);
    const store = await SqliteStore.open({ path: dbPathIn(newDir()), clock });
    const queue = new Queue(store, { clock });
    await queue.enqueueMany(Array.from({ length: 5_000 }, () => ({ class: 'old' })));
    for (let id = 1; id <= 5_000; id++) await store.jobCancel({ id, actor: 'test' });
    clock.advance(40 * DAY);
    const logger = createLogger({
      level: 'error',
      file: null,
      maxSizeMb: 1,
      maxFiles: 1,
      supervisorId: 'test',
      console: false,
    });
    const retention = new Retention({ store, logger, clock, policy: { ...POLICY, batch_size: 100 } });
    retention.start();
    const running = retention.prune();
    await waitFor(
      'the prune to delete a few batches',
      async () => (await store.jobsPruneCount({ status: 'CANCELLED', finishedBefore: clock.now() })) <= 4_500,
      {
        timeoutMs: 10_000,
        intervalMs: 1,
      },
    );
    await retention.stop();
    const report = await running;
    expect(report.complete).toBe(false);
    const cancelled = report.by_status.find((line) => line.status === 'CANCELLED')!;
    expect(cancelled.count).toBeGreaterThan(0);
    expect(cancelled.count).toBeLessThan(5_000);
    expect(await store.jobsPruneCount({ status: 'CANCELLED', finishedBefore: cancelled.finished_before })).toBe(
      5_000 - cancelled.count,
    );
    await retention.stop();
    await store.close();
  });
});
