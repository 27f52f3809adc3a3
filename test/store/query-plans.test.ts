import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { HISTORY_SQL } from '../../src/store/sqlite/sql/history.js';
import { JOB_SQL } from '../../src/store/sqlite/sql/jobs.js';
import { FLOW_SQL } from '../../src/store/sqlite/sql/flows.js';
import { RETENTION_SQL } from '../../src/store/sqlite/sql/retention.js';
import { CLASS_SQL } from '../../src/store/sqlite/sql/classes.js';
import { LEASE_SQL } from '../../src/store/sqlite/sql/leases.js';
import { STATS_SQL } from '../../src/store/sqlite/sql/stats.js';
import { WORKER_SQL } from '../../src/store/sqlite/sql/workers.js';
import { OUTCOME_SQL } from '../../src/store/sqlite/sql/outcome-events.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { TestClock } from '../helpers/clock.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';
import { LAST_HOUR_SINCE, seedDeepQueue, windowOf } from './deep-queue.js';
import { claimJobs } from '../helpers/fenced-writes.js';

const newDir = tempDir();

/** `EXPLAIN QUERY PLAN` flattened to its detail lines. */
function plan(store: SqliteStore, sql: string, bind: unknown[]): string[] {
  const rows = store.connection.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...bind) as { detail: string }[];
  return rows.map((row) => row.detail);
}

describe('query plans with a deep queue', () => {
  let store: SqliteStore;

  beforeAll(async () => {
    const clock = new TestClock();
    store = await SqliteStore.open({ path: dbPathIn(newDir()), clock });
    await seedDeepQueue(store, clock);
    store.connection.exec('ANALYZE');
  });
  afterAll(async () => {
    await store.close();
  });

  const now = Date.UTC(2026, 0, 2);
  const claim = { class: 'email', ownerId: 'w9', now, leaseExpiresAt: now + 30_000, limit: 10, classMaxRetries: 5 };
  // [what, statement, values, its index, a sort of a handful of rows is fine]
  const mustUseIndex: [string, string, unknown[], string, boolean][] = [
    ['claim (one class)', LEASE_SQL.claimOneClass, [claim], 'jobs_claim', false],
    ['an idle claim looks first (one class)', LEASE_SQL.dueOneClass, [{ class: 'email', now }], 'jobs_claim', false],
    ['sweeper: expired leases', LEASE_SQL.expired, [{ now, limit: 100 }], 'jobs_lease_expiry', false],
    ['supervisor: jobs held by a dead child', LEASE_SQL.heldByOwner, [{ ownerId: 'w1' }], 'jobs_owner', false],
    ['idempotency key lookup', JOB_SQL.findByKey, ['email', 'k'], 'jobs_idempotency', false],
    ['a key free again is given up', FLOW_SQL.freeKey, [{ class: 'email', key: 'k', now }], 'jobs_idempotency', false],
    ["a job's parents", FLOW_SQL.parentsOf, [1], 'sqlite_autoindex_job_dependencies_1 (job_id=?)', false],
    ["a job's children", FLOW_SQL.childrenOf, [1, 50], 'job_dependencies_parent (parent_id=?)', false],
    // show and the dashboard count them only past the first page
    [
      "a job's children counted",
      FLOW_SQL.countChildren,
      [50_001],
      'COVERING INDEX job_dependencies_parent (parent_id=?)',
      false,
    ],
    [
      "an ended job's waiting dependents",
      FLOW_SQL.waitingDependents,
      [1],
      'job_dependencies_parent (parent_id=?)',
      false,
    ],
    [
      'retention: a batch of finished jobs no waiting job needs',
      RETENTION_SQL.deleteOlderBatch,
      [{ status: 'SUCCEEDED', before: now, limit: 500 }],
      'jobs_finished (status=? AND finished_at<?)',
      false,
    ],
    // one seek per class (or per status), then a sort of at most `limit` rows from each
    [
      'list by status',
      JOB_SQL.listByStatus,
      [{ status: 'QUEUED', limit: 20, beforeId: 40_000 }],
      'jobs_class_status',
      true,
    ],
    ['list by class', JOB_SQL.listByClass, [{ class: 'sms', limit: 20, beforeId: 40_000 }], 'jobs_class_status', true],
    // `list --status WAITING`, and with a class: the deep queue's waiting jobs are all of one class
    [
      'list by status: WAITING',
      JOB_SQL.listByStatus,
      [{ status: 'WAITING', limit: 20, beforeId: 60_000 }],
      'jobs_class_status',
      true,
    ],
    [
      'list by class and status: WAITING',
      JOB_SQL.listByClassStatus,
      [{ class: 'report', status: 'WAITING', limit: 20, beforeId: 60_000 }],
      'jobs_class_status (class=? AND status=? AND id<?)',
      false,
    ],
    [
      'list by class and status',
      JOB_SQL.listByClassStatus,
      [{ class: 'sms', status: 'QUEUED', limit: 20, beforeId: 40_000 }],
      'jobs_class_status',
      false,
    ],
    ['timeline of a job', HISTORY_SQL.eventList, [1], 'job_events_job', false],
    ['log lines of a job', HISTORY_SQL.logList, [1], 'sqlite_autoindex_job_logs_1', false],
    // waitFor: the jobs waited for, by key; events: the terminal events after a position, then the newest of them
    ['jobs waited for that ended', OUTCOME_SQL.ended, [{ ids: '[1,2,3]' }], 'INTEGER PRIMARY KEY (rowid=?)', false],
    [
      'outcomes after a position',
      OUTCOME_SQL.after,
      [{ afterId: 1_000, limit: 1_000 }],
      'SEARCH e USING INDEX job_events_outcomes (id>?)',
      false,
    ],
    ['the newest outcome', OUTCOME_SQL.latest, [], 'job_events_outcomes', false],
    ['live workers of a host', WORKER_SQL.liveOnHost, [{ host: 'h1' }], 'workers_live', false],
    // the dashboard: a job by its key in any class (one seek per class present, a sort of what they found)
    ['jobs by idempotency key', JOB_SQL.listByKey, [{ key: 'key-100' }], 'jobs_idempotency', true],
    [
      'job by class and idempotency key',
      JOB_SQL.listByClassKey,
      [{ class: 'email', key: 'key-100' }],
      'jobs_idempotency',
      false,
    ],
    ['FAILED jobs counted', JOB_SQL.countFailed, [{}], 'jobs_failed', false],
    [
      'FAILED jobs of a class counted',
      JOB_SQL.countFailedOfClass,
      [{ class: 'email' }],
      'jobs_class_status (class=? AND status=?)',
      false,
    ],
    [
      'FAILED jobs of an error code counted',
      JOB_SQL.countFailedWithCode,
      [{ errorCode: 'E:1' }],
      'jobs_failed (class=? AND error_code=?)',
      false,
    ],
    [
      'FAILED jobs of a class and code counted',
      JOB_SQL.countFailedOfClassWithCode,
      [{ class: 'email', errorCode: 'E:1' }],
      'jobs_failed (class=? AND error_code=?)',
      false,
    ],
    // bulk actions, a batch at a time below the newest id the confirmation counted
    [
      'retry of every FAILED job',
      JOB_SQL.retryAllFailed,
      [{ now, throughId: 40_000, limit: 500 }],
      'COVERING INDEX jobs_failed',
      false,
    ],
    [
      'retry of a class',
      JOB_SQL.retryClassFailed,
      [{ class: 'email', now, throughId: 40_000, limit: 500 }],
      'jobs_class_status (class=? AND status=? AND id<?)',
      false,
    ],
    [
      'retry of an error code',
      JOB_SQL.retryCodeFailed,
      [{ errorCode: 'E:1', now, throughId: 40_000, limit: 500 }],
      'jobs_failed (class=? AND error_code=? AND id<?)',
      false,
    ],
    [
      'retry of a class and error code',
      JOB_SQL.retryClassCodeFailed,
      [{ class: 'email', errorCode: 'E:1', now, throughId: 40_000, limit: 500 }],
      'jobs_failed (class=? AND error_code=? AND id<?)',
      false,
    ],
    [
      'cancel of every QUEUED job',
      JOB_SQL.cancelAllQueued,
      [{ now, throughId: 40_000, limit: 500 }],
      'jobs_class_status (class=? AND status=? AND id<?)',
      false,
    ],
    [
      "cancel of a class's QUEUED jobs",
      JOB_SQL.cancelClassQueued,
      [{ class: 'email', now, throughId: 40_000, limit: 500 }],
      'jobs_class_status (class=? AND status=? AND id<?)',
      false,
    ],
    // grouped by minute: a sort of the window's rows (the dashboard asks for the current minute)
    [
      'throughput per minute',
      STATS_SQL.finishedByMinute,
      [{ ...windowOf(now - 60_000), until: now }],
      'jobs_finished (status=? AND finished_at>? AND finished_at<?)',
      true,
    ],
    [
      'children that crashed lately',
      WORKER_SQL.crashes,
      [{ since: now - 60_000, liveSince: now - 6_000, limit: 100 }],
      'workers_exited (exited_at>?)',
      false,
    ],
    // disabled_classes holds a row per class a live supervisor disabled: read whole, each supervisor by key
    // the oldest due job of each class present: a seek in the covering jobs_claim per priority of each class
    [
      'oldest due job per class',
      STATS_SQL.oldestDue,
      [{ now }],
      'USING COVERING INDEX jobs_claim (class=? AND priority=?)',
      true,
    ],
    [
      'disabled classes',
      CLASS_SQL.disabledList,
      [{ liveSince: now - 6_000 }],
      'sqlite_autoindex_workers_1 (id=?)',
      true,
    ],
  ];

  it.each(mustUseIndex)(
    '%s uses its index and sorts nothing it did not pick by index',
    (_name, sql, bind, index, sortAllowed) => {
      const detail = plan(store, sql, bind).join('\n');
      expect(detail).toContain(index);
      if (!sortAllowed) expect(detail).not.toMatch(/TEMP B-TREE/);
      expect(detail).not.toMatch(/^SCAN jobs$/m);
    },
  );

  // [what, statement, values, the index its rows come from]: pages of the dashboard's jobs list, below a cursor
  const keysetLists: [string, string, Record<string, unknown>, string][] = [
    ['newest', JOB_SQL.listAll, {}, 'INTEGER PRIMARY KEY (rowid<?)'],
    [
      'by status',
      JOB_SQL.listByStatus,
      { status: 'FAILED' },
      'jobs_class_status (class=? AND status=? AND id>? AND id<?)',
    ],
    ['by class', JOB_SQL.listByClass, { class: 'email' }, 'jobs_class_status (class=? AND status=? AND id>? AND id<?)'],
    [
      'by class and status',
      JOB_SQL.listByClassStatus,
      { class: 'sms', status: 'QUEUED' },
      'jobs_class_status (class=? AND status=? AND id<?)',
    ],
    [
      'by error code',
      JOB_SQL.listFailedByCode,
      { errorCode: 'E:1' },
      'jobs_failed (class=? AND error_code=? AND id>? AND id<?)',
    ],
    [
      'by class and error code',
      JOB_SQL.listFailedByClassCode,
      { class: 'email', errorCode: 'E:1' },
      'jobs_failed (class=? AND error_code=? AND id<?)',
    ],
  ];

  it.each(keysetLists)(
    'the jobs page %s starts below its cursor in its index (keyset, no OFFSET, no walk of other rows)',
    (_name, sql, bind, index) => {
      const detail = plan(store, sql, [{ ...bind, beforeId: 40_000, limit: 50 }]).join('\n');
      expect(detail).toContain(index);
      expect(sql).not.toMatch(/OFFSET @beforeId/);
      expect(detail).not.toMatch(/SEARCH j USING INTEGER PRIMARY KEY/);
      expect(detail).not.toMatch(/^SCAN jobs$/m);
    },
  );

  // [what, statement, values]: a window's measured attempts, then a sort of those
  const costReads: [string, string, Record<string, number>][] = [
    ['cost by class', STATS_SQL.costByClass, { ...windowOf(LAST_HOUR_SINCE) }],
    ['attempts by CPU', STATS_SQL.costTopCpu, { ...windowOf(LAST_HOUR_SINCE), limit: 10 }],
    ['attempts by peak memory', STATS_SQL.costTopRss, { ...windowOf(LAST_HOUR_SINCE), limit: 10 }],
  ];

  it.each(costReads)(
    'stats: %s finds the window through jobs_finished and job_attempts_error, never a whole table',
    (_name, sql, bind) => {
      const detail = plan(store, sql, [bind]).join('\n');
      expect(detail).toContain('SEARCH j USING INDEX jobs_finished (status=? AND finished_at>?)');
      expect(detail).toContain('SEARCH a USING PRIMARY KEY (job_id=? AND attempt=?)');
      // covering: a row of job_attempts read for each of the index's entries would cost a seek each
      expect(detail).toContain('SEARCH job_attempts USING COVERING INDEX job_attempts_error');
      expect(detail).not.toMatch(/^SCAN (jobs|j|job_attempts|a)$/m);
    },
  );

  it('the claim walks the queue in ORDER BY order: claims come back highest priority, oldest first', async () => {
    const claimed = await claimJobs(store, { classes: ['sms'], ownerId: 'w2', limit: 5, leaseMs: 30_000 });
    const priorities = claimed.map((job) => job.priority);
    expect(priorities).toEqual([6, 6, 6, 6, 6]);
  });
});
