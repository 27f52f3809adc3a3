/**
 * The operators' statements on SQLite: each walks an index (EXPLAIN QUERY
 * PLAN on a deep table). What they answer (values on a small, known data
 * set) is part of the Store conformance suite (conformance.ts), which both
 * drivers run; how `leasehold workers` shows rows is checked here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../../src/queue/queue.js';
import { STALE_SUPERVISOR_MS } from '../../src/queue/registry.js';
import { describeWorkers } from '../../src/reports/workers.js';
import { RETENTION_SQL } from '../../src/store/sqlite/sql/retention.js';
import { STATS_SQL } from '../../src/store/sqlite/sql/stats.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { windowParts } from '../../src/store/stats-window.js';
import type { Settlement, WorkerRow } from '../../src/store/types.js';
import { TestClock } from '../helpers/clock.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';
import { claimJobs } from '../helpers/fenced-writes.js';

const DEPTH = 50_000;
const newDir = tempDir();

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
      await queue.enqueueMany(
        Array.from({ length: 10_000 }, (_, i) => ({ class: classes[(start + i) % 4]!, maxRetries: 0 })),
      );
    }
    // a realistic mix: most finished (some failed with codes), some held, the rest queued
    for (const cls of classes) {
      const held = await claimJobs(store, { classes: [cls], ownerId: `w-${cls}`, limit: 8_000, leaseMs: 3_600_000 });
      // settled 100 to a transaction, 1 s apart, as a worker's group commit does: one by one, the set-up alone
      // outlasted its hook's deadline on a loaded machine
      const settlements: Settlement[] = held.slice(0, 7_900).map((job, i) => ({
        id: job.id,
        leaseToken: job.leaseToken,
        startedAt: null,
        verdict:
          i % 5 === 0
            ? { type: 'fail', error: { code: `E:${i % 3}`, detail: 'x', retryable: false }, retryDelayMs: 0 }
            : { type: 'complete', result: null },
      }));
      for (let at = 0; at < settlements.length; at += 100) {
        clock.advance(1_000);
        const { settled } = await store.jobsSettle({ settlements: settlements.slice(at, at + 100) });
        expect(settled.every((result) => result.held)).toBe(true);
      }
    }
    store.connection.exec('ANALYZE');
  });
  afterAll(async () => {
    await store.close();
  });

  const bind = {
    since: Date.UTC(2026, 0, 1),
    ...windowParts(Date.UTC(2026, 0, 1), { from: Date.UTC(2025, 11, 31), until: Date.UTC(2026, 0, 1, 12) }),
    limit: 10,
    status: 'SUCCEEDED',
    before: Date.UTC(2026, 0, 2),
    until: Date.UTC(2026, 0, 2),
  };
  const mustUseIndex: [string, string, string][] = [
    ['counts by class and status', STATS_SQL.countsByClassStatus, 'USING COVERING INDEX jobs_class_status'],
    ['oldest in-flight jobs', STATS_SQL.inFlightOldest, 'USING INDEX jobs_lease_expiry'],
    ['retry distribution', STATS_SQL.retryDistribution, 'USING INDEX jobs_finished (status=? AND finished_at>?)'],
    ['top error codes', STATS_SQL.topErrors, 'USING COVERING INDEX job_attempts_error'],
    ['top error codes per class', STATS_SQL.topErrorsByClass, 'USING COVERING INDEX job_attempts_error'],
    ['throughput', STATS_SQL.finishedSince, 'USING COVERING INDEX jobs_finished (status=? AND finished_at>?)'],
    ['zombie writes', STATS_SQL.zombieWrites, 'USING COVERING INDEX job_events_zombie'],
    [
      'what retention would delete',
      RETENTION_SQL.countOlder,
      'USING COVERING INDEX jobs_finished (status=? AND finished_at<?)',
    ],
    [
      'retention batch',
      RETENTION_SQL.deleteOlderBatch,
      'USING COVERING INDEX jobs_finished (status=? AND finished_at<?)',
    ],
    // the windowed reads take the stats rollup's minutes by a range of its key
    ...([
      ['retry distribution', STATS_SQL.retryDistribution, 'job_end_minutes'],
      ['throughput', STATS_SQL.finishedSince, 'job_end_minutes'],
      ['throughput per minute', STATS_SQL.finishedByMinute, 'job_end_minutes'],
      ['cost by class', STATS_SQL.costByClass, 'attempt_cost_minutes'],
      ['attempts by CPU', STATS_SQL.costTopCpu, 'attempt_cost_top'],
      ['attempts by peak memory', STATS_SQL.costTopRss, 'attempt_cost_top'],
    ].map(([name, sql, table]) => [
      `${name}: the rollup`,
      sql,
      `SEARCH ${table} USING INDEX sqlite_autoindex_${table}_1 (minute>? AND minute<?)`,
    ]) as [string, string, string][]),
  ];

  it.each(mustUseIndex)('%s walks its index, never the whole jobs table or timeline', (_name, sql, index) => {
    const detail = plan(store, sql, bind);
    expect(detail).toContain(index);
    expect(detail).not.toMatch(/^SCAN (jobs|j|job_events|job_attempts|a)$/m);
  });

  it('counts are a range count per class and status (the sort is of those few rows), and the batch delete cascades through indexes', () => {
    const counts = plan(store, STATS_SQL.countsByClassStatus, bind);
    expect(counts).toMatch(/SEARCH jobs USING COVERING INDEX jobs_class_status \(class=\? AND status=\?\)/);
    expect(counts).not.toMatch(/TEMP B-TREE FOR GROUP BY/);
    const cascade = plan(store, RETENTION_SQL.deleteOlderBatch, bind);
    expect(cascade).toMatch(/SEARCH job_events USING COVERING INDEX job_events_job \(job_id=\?\)/);
    expect(cascade).toMatch(/SEARCH job_attempts USING PRIMARY KEY \(job_id=\?\)/);
    // the in-flight sort is over held rows only (the partial index): a few per worker
    expect(plan(store, STATS_SQL.inFlightOldest, bind)).toMatch(
      /SEARCH w USING INDEX sqlite_autoindex_workers_1 \(id=\?\)/,
    );
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
