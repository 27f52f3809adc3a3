/**
 * The operators' statements: each walks an index (EXPLAIN QUERY PLAN on a deep
 * table), and each answers its question (values on a small, known data set).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../src/errors.js';
import { Queue } from '../../src/queue/queue.js';
import { collectStats, describeWorkers, STALE_SUPERVISOR_MS } from '../../src/stats.js';
import { RETENTION_SQL } from '../../src/store/sqlite/sql/retention.js';
import { STATS_SQL } from '../../src/store/sqlite/sql/stats.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { WorkerRow } from '../../src/store/types.js';
import { TestClock } from '../helpers/clock.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';

const DEPTH = 50_000;
const newDir = tempDir();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function plan(store: SqliteStore, sql: string, bind: Record<string, unknown>): string {
  const named = Object.fromEntries(Object.entries(bind).filter(([key]) => sql.includes(`@${key}`)));
  const rows = store.connection.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(named) as { detail: string }[];
  return rows.map((row) => row.detail).join('\n');
}

describe('operator statements: query plans on a deep table', () => {
  let store: SqliteStore;
  const clock = new TestClock();

  beforeAll(async () => {
    store = await SqliteStore.open({ path: dbPathIn(newDir()), clock });
    const queue = new Queue(store, { clock });
    const classes = ['email', 'sms', 'report', 'video'];
    for (let start = 0; start < DEPTH; start += 10_000) {
      await queue.enqueueMany(Array.from({ length: 10_000 }, (_, i) => ({ class: classes[(start + i) % 4]!, maxRetries: 0 })));
    }
    // a realistic mix: most finished (some failed with codes), some held, the rest queued
    for (const cls of classes) {
      const held = await store.jobClaim({ classes: [cls], ownerId: `w-${cls}`, limit: 8_000, leaseMs: 30_000 });
      for (const [i, job] of held.slice(0, 7_900).entries()) {
        clock.advance(10);
        if (i % 5 === 0) {
          await store.jobFailIfHeld({ id: job.id, leaseToken: job.leaseToken, error: { code: `E:${i % 3}`, detail: 'x', retryable: false }, retryDelayMs: 0 });
        } else {
          await store.jobCompleteIfHeld({ id: job.id, leaseToken: job.leaseToken, result: null });
        }
      }
    }
    store.connection.exec('ANALYZE');
  });
  afterAll(async () => {
    await store.close();
  });

  const bind = { since: Date.UTC(2026, 0, 1), limit: 10, status: 'SUCCEEDED', before: Date.UTC(2026, 0, 2) };
  const mustUseIndex: [string, string, string][] = [
    ['counts by class and status', STATS_SQL.countsByClassStatus, 'USING COVERING INDEX jobs_class_status'],
    ['oldest in-flight jobs', STATS_SQL.inFlightOldest, 'USING INDEX jobs_lease_expiry'],
    ['retry distribution', STATS_SQL.retryDistribution, 'USING INDEX jobs_status_finished (status=? AND finished_at>?)'],
    ['top error codes', STATS_SQL.topErrors, 'USING COVERING INDEX job_attempts_error'],
    ['top error codes per class', STATS_SQL.topErrorsByClass, 'USING COVERING INDEX job_attempts_error'],
    ['throughput', STATS_SQL.finishedSince, 'USING COVERING INDEX jobs_status_finished (status=? AND finished_at>?)'],
    ['zombie writes', STATS_SQL.zombieWrites, 'USING COVERING INDEX job_events_zombie'],
    ['what retention would delete', RETENTION_SQL.countOlder, 'USING COVERING INDEX jobs_status_finished (status=? AND finished_at<?)'],
    ['retention batch', RETENTION_SQL.deleteOlderBatch, 'USING COVERING INDEX jobs_status_finished (status=? AND finished_at<?)'],
  ];

  it.each(mustUseIndex)('%s walks its index, never the whole jobs table or timeline', (_name, sql, index) => {
    const detail = plan(store, sql, bind);
    expect(detail).toContain(index);
    expect(detail).not.toMatch(/^SCAN (jobs|j|job_events|job_attempts|a)$/m);
  });

  it('counts come in index order (no sort), and the batch delete cascades through indexes', () => {
    expect(plan(store, STATS_SQL.countsByClassStatus, bind)).not.toMatch(/TEMP B-TREE/);
    const cascade = plan(store, RETENTION_SQL.deleteOlderBatch, bind);
    expect(cascade).toMatch(/SEARCH job_events USING COVERING INDEX job_events_job \(job_id=\?\)/);
    expect(cascade).toMatch(/SEARCH job_attempts USING PRIMARY KEY \(job_id=\?\)/);
    // the in-flight sort is over held rows only (the partial index): a few per worker
    expect(plan(store, STATS_SQL.inFlightOldest, bind)).toMatch(/SEARCH w USING INDEX sqlite_autoindex_workers_1 \(id=\?\)/);
  });
});

describe('operator statements: the answers', () => {
  let store: SqliteStore;
  let clock: TestClock;
  let queue: Queue;
  const T0 = Date.UTC(2026, 0, 10);

  beforeEach(async () => {
    clock = new TestClock(T0);
    store = await SqliteStore.open({ path: dbPathIn(newDir()), clock });
    queue = new Queue(store, { clock });
  });
  afterEach(async () => {
    await store.close();
  });

  const claimOne = async (cls: string, owner: string) => {
    const [job] = await store.jobClaim({ classes: [cls], ownerId: owner, limit: 1, leaseMs: 30_000 });
    if (job === undefined) throw new Error(`nothing to claim in ${cls}`);
    return job;
  };
  const failOne = async (cls: string, code: string) => {
    const job = await claimOne(cls, 'w');
    return store.jobFailIfHeld({ id: job.id, leaseToken: job.leaseToken, error: { code, detail: 'd', retryable: true }, retryDelayMs: 0 });
  };

  it('counts, retries, errors (overall and per class, in a window), throughput and in-flight jobs', async () => {
    await queue.enqueueMany([
      { class: 'a', maxRetries: 2 },
      { class: 'a', maxRetries: 0 },
      { class: 'b', maxRetries: 1 },
      { class: 'b', maxRetries: 0 },
      { class: 'c' },
    ]);
    // An old failure, outside a 1-hour window.
    await failOne('a', 'OLD:ERROR'); // job 1: attempt 1 fails, requeued
    clock.advance(2 * HOUR);
    await failOne('a', 'NET:DOWN'); // job 2 (max 0): FAILED
    await failOne('a', 'NET:DOWN'); // job 1: attempt 2 fails, requeued
    const a1 = await claimOne('a', 'w'); // job 1: attempt 3 succeeds
    await store.jobCompleteIfHeld({ id: a1.id, leaseToken: a1.leaseToken, result: null });
    await failOne('b', 'NET:DOWN'); // job 3: requeued
    await failOne('b', 'DISK:FULL'); // job 4 (max 0): FAILED
    clock.advance(120_000);
    const b3 = await claimOne('b', 'w'); // job 3, attempt 2: done
    await store.jobCompleteIfHeld({ id: b3.id, leaseToken: b3.leaseToken, result: null });

    expect(await store.statsCounts()).toEqual([
      { class: 'a', status: 'FAILED', count: 1 },
      { class: 'a', status: 'SUCCEEDED', count: 1 },
      { class: 'b', status: 'FAILED', count: 1 },
      { class: 'b', status: 'SUCCEEDED', count: 1 },
      { class: 'c', status: 'QUEUED', count: 1 },
    ]);
    expect(await store.statsRetries({ since: 0 })).toEqual([
      { class: 'a', status: 'FAILED', attempts: 1, jobs: 1 },
      { class: 'a', status: 'SUCCEEDED', attempts: 3, jobs: 1 },
      { class: 'b', status: 'FAILED', attempts: 1, jobs: 1 },
      { class: 'b', status: 'SUCCEEDED', attempts: 2, jobs: 1 },
    ]);
    const window = clock.now() - HOUR;
    expect(await store.statsTopErrors({ since: window, limit: 10 })).toEqual([
      { code: 'NET:DOWN', count: 3, last_at: T0 + 2 * HOUR },
      { code: 'DISK:FULL', count: 1, last_at: T0 + 2 * HOUR },
    ]);
    expect((await store.statsTopErrors({ since: 0, limit: 10 })).map((e) => e.code)).toEqual(['NET:DOWN', 'DISK:FULL', 'OLD:ERROR']);
    expect(await store.statsTopErrors({ since: 0, limit: 1 })).toHaveLength(1);
    expect(await store.statsTopErrorsByClass({ since: window, limit: 1 })).toEqual([
      { class: 'a', code: 'NET:DOWN', count: 2, last_at: T0 + 2 * HOUR },
      { class: 'b', code: 'DISK:FULL', count: 1, last_at: T0 + 2 * HOUR },
    ]);
    expect(await store.statsFinishedSince({ since: clock.now() - 60_000 })).toEqual([{ status: 'SUCCEEDED', count: 1 }]);
    expect(await store.statsFinishedSince({ since: 0 })).toEqual([
      { status: 'FAILED', count: 2 },
      { status: 'SUCCEEDED', count: 2 },
    ]);

    // In flight: held longest first, the owner's pid from the registry (null when unknown).
    await store.workerRegister({ id: 'child-1', kind: 'child', host: 'h', supervisorId: 's', pid: 4242, class: 'c', state: 'busy', restarts: 0 });
    await queue.enqueue({ class: 'c' });
    const first = await claimOne('c', 'child-1');
    clock.advance(5_000);
    await store.jobStart({ id: first.id, leaseToken: first.leaseToken, leaseMs: 30_000 });
    const second = await claimOne('c', 'unknown-owner');
    clock.advance(1_000);
    const rows = await store.statsInFlight({ limit: 10 });
    expect(rows.map((r) => [r.id, r.status, r.owner_id, r.pid])).toEqual([
      [first.id, 'RUNNING', 'child-1', 4242],
      [second.id, 'CLAIMED', 'unknown-owner', null],
    ]);
    expect(await store.statsInFlight({ limit: 1 })).toHaveLength(1);

    const report = await collectStats(store, {
      now: clock.now(),
      retention: { succeeded_days: 30, failed_days: 90, cancelled_days: 30, batch_size: 100, interval_seconds: 60 },
      windowMs: HOUR,
    });
    expect(report.in_flight[0]).toMatchObject({ id: first.id, pid: 4242, attempt: 1, held_ms: 6_000, runtime_ms: 1_000, heartbeat_age_ms: 1_000, lease_left_ms: 29_000 });
    expect(report.in_flight[1]).toMatchObject({ runtime_ms: null, held_ms: 1_000 });
    expect(report.jobs.total).toMatchObject({ QUEUED: 0, CLAIMED: 1, RUNNING: 1, SUCCEEDED: 2, FAILED: 2, total: 6 });
    expect(report.jobs.by_class.map((row) => row.class)).toEqual(['a', 'b', 'c']);
    expect(report.retries).toMatchObject({ finished: 4, retried: 2 });
    expect(report.throughput.last_hour).toMatchObject({ SUCCEEDED: 2, FAILED: 2, total: 4 });
    expect(report.errors.top.map((e) => e.code)).toEqual(['NET:DOWN', 'DISK:FULL']);
  });

  it('attempts handed back at shutdown are neither errors nor spent attempts', async () => {
    await queue.enqueue({ class: 'a' });
    const held = await claimOne('a', 'w');
    await store.jobReleaseIfHeld({ id: held.id, leaseToken: held.leaseToken, reason: 'shutdown' });
    const again = await claimOne('a', 'w');
    await store.jobCompleteIfHeld({ id: again.id, leaseToken: again.leaseToken, result: null });
    expect(await store.statsTopErrors({ since: 0, limit: 10 })).toEqual([]);
    expect(await store.statsRetries({ since: 0 })).toEqual([{ class: 'a', status: 'SUCCEEDED', attempts: 1, jobs: 1 }]);
  });

  it('zombie writes are counted from the timeline', async () => {
    await queue.enqueue({ class: 'a' });
    const job = await claimOne('a', 'w');
    expect(await store.statsZombieWrites()).toBe(0);
    await expect(store.leaseExtend({ id: job.id, leaseToken: 'stale', leaseMs: 1_000 })).rejects.toBeInstanceOf(LeaseLostError);
    await expect(store.jobCompleteIfHeld({ id: job.id, leaseToken: 'stale', result: null })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store.statsZombieWrites()).toBe(2);
  });

  it('prune: counts and deletes by status and age, in batches; a job retried meanwhile stays', async () => {
    await queue.enqueueMany(Array.from({ length: 5 }, () => ({ class: 'a', maxRetries: 0 })));
    for (let i = 0; i < 5; i++) {
      const job = await claimOne('a', 'w');
      if (i < 3) await store.jobCompleteIfHeld({ id: job.id, leaseToken: job.leaseToken, result: null });
      else await store.jobFailIfHeld({ id: job.id, leaseToken: job.leaseToken, error: { code: 'X:Y', detail: 'd', retryable: false }, retryDelayMs: 0 });
      clock.advance(DAY);
    }
    const now = clock.now();
    // SUCCEEDED at T0, T0+1d, T0+2d; FAILED at T0+3d, T0+4d; now = T0+5d
    expect(await store.jobsPruneCount({ status: 'SUCCEEDED', finishedBefore: now - 3 * DAY })).toBe(2);
    expect(await store.jobsPruneCount({ status: 'FAILED', finishedBefore: now })).toBe(2);
    expect(await store.jobRetry({ id: 4, actor: 'op' })).toBe('queued');
    expect(await store.jobsPruneCount({ status: 'FAILED', finishedBefore: now })).toBe(1);
    expect(await store.jobsPruneBatch({ status: 'SUCCEEDED', finishedBefore: now - 3 * DAY, limit: 1 })).toBe(1);
    expect(await store.jobGet({ id: 1 })).toBeUndefined();
    expect(await store.attemptList({ jobId: 1 })).toEqual([]);
    expect(await store.eventList({ jobId: 1 })).toEqual([]);
    expect(await store.jobsPruneBatch({ status: 'SUCCEEDED', finishedBefore: now - 3 * DAY, limit: 10 })).toBe(1);
    expect(await store.jobsPruneBatch({ status: 'SUCCEEDED', finishedBefore: now - 3 * DAY, limit: 10 })).toBe(0);
    expect(await store.jobsPruneBatch({ status: 'FAILED', finishedBefore: now, limit: 10 })).toBe(1);
    expect((await store.jobList({ limit: 10 })).map((job) => [job.id, job.status])).toEqual([
      [4, 'QUEUED'],
      [3, 'SUCCEEDED'],
    ]);
    const size = await store.databaseSize();
    expect(size.bytes).toBe(size.pageCount * size.pageSize);
    expect(size.pageCount).toBeGreaterThan(0);
    expect(await store.schemaVersion()).toBe(2);
    await expect(store.ping()).resolves.toBeUndefined();
  });
});

describe('workers as `leasehold workers` shows them', () => {
  const row = (over: Partial<WorkerRow>): WorkerRow => ({
    id: 's1',
    kind: 'supervisor',
    host: 'h',
    supervisor_id: null,
    pid: 1,
    class: null,
    state: 'ready',
    started_at: 0,
    heartbeat_at: 0,
    exited_at: null,
    exit_code: null,
    exit_signal: null,
    restarts: 0,
    cpu_percent: null,
    memory_bytes: null,
    job_id: null,
    ...over,
  });

  it('a supervisor whose heartbeat is older than 3 beats is stale, and so are its children; exited ones never are', () => {
    const now = 100_000;
    const views = describeWorkers(
      [
        row({ id: 'fresh', heartbeat_at: now - 1_000 }),
        row({ id: 'fresh/c', kind: 'child', supervisor_id: 'fresh', heartbeat_at: now - 60_000 }),
        row({ id: 'old', heartbeat_at: now - STALE_SUPERVISOR_MS - 1 }),
        row({ id: 'old/c', kind: 'child', supervisor_id: 'old', heartbeat_at: now }),
        row({ id: 'gone', heartbeat_at: now - 60_000, exited_at: now - 50_000 }),
        row({ id: 'gone/c', kind: 'child', supervisor_id: 'gone', heartbeat_at: now - 60_000 }),
        row({ id: 'gone/c2', kind: 'child', supervisor_id: 'gone', exited_at: now - 50_000, started_at: now - 70_000 }),
      ],
      now,
    );
    expect(views.map((v) => [v.id, v.stale])).toEqual([
      ['fresh', false],
      ['fresh/c', false],
      ['old', true],
      ['old/c', true],
      ['gone', false],
      ['gone/c', true],
      ['gone/c2', false],
    ]);
    expect(views[6]).toMatchObject({ uptime_ms: 20_000, heartbeat_age_ms: now });
    expect(STALE_SUPERVISOR_MS).toBe(6_000);
  });
});
