import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_SQL } from '../../src/store/postgres/sql/history.js';
import { JOB_SQL } from '../../src/store/postgres/sql/jobs.js';
import { CLASS_SQL } from '../../src/store/postgres/sql/classes.js';
import { SETTLE_SQL } from '../../src/store/postgres/sql/settle.js';
import { FLOW_SQL } from '../../src/store/postgres/sql/flows.js';
import { ROLLUP_SQL } from '../../src/store/postgres/sql/rollup.js';
import { LEASE_SQL } from '../../src/store/postgres/sql/leases.js';
import { STATS_SQL } from '../../src/store/postgres/sql/stats.js';
import { WORKER_SQL } from '../../src/store/postgres/sql/workers.js';
import { OUTCOME_SQL } from '../../src/store/postgres/sql/outcome-events.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { TestClock } from '../helpers/clock.js';
import { adminClient, pgUrl, schemaPool } from '../helpers/postgres.js';
import { IN_INDEX } from '../../src/store/postgres/connection.js';
import { LAST_HOUR_SINCE, seedDeepQueue, windowOf } from './deep-queue.js';
import { partValues } from '../../src/store/stats-window.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { Queue } from '../../src/queue/queue.js';

const schemas = schemaPool('lh_plans');
/** Jobs of the one-class queue whose statistics say one status. */
const ENDED_JOBS = 10_000;

/** Reads the store runs planned with their values (readPlannedWithValues): only their custom plan counts. */
const PLANNED_WITH_VALUES = new Set<{ text: string }>([
  JOB_SQL.listByStatus,
  JOB_SQL.listByClass,
  JOB_SQL.listByClassStatus,
  JOB_SQL.listFailedByCode,
  JOB_SQL.listFailedByClassCode,
  STATS_SQL.costRanking,
]);

/** A row of EXPLAIN's answer as text (pg parses FORMAT JSON's). */
const planText = (row: Record<string, unknown>) =>
  typeof row['QUERY PLAN'] === 'string' ? row['QUERY PLAN'] : JSON.stringify(row['QUERY PLAN']);

/**
 * The plan of a statement as it runs: generic (what a named statement ends
 * up using after a few executions) and custom (planned for these values).
 */
async function plans(
  client: pg.Client,
  sql: { text: string },
  values: unknown[],
  format: 'text' | 'json' = 'text',
): Promise<string[]> {
  const explain = format === 'json' ? 'EXPLAIN (FORMAT JSON)' : 'EXPLAIN';
  const custom = await client.query(`${explain} ${sql.text}`, values);
  if (PLANNED_WITH_VALUES.has(sql)) return [custom.rows.map(planText).join('\n')];
  await client.query(`PREPARE q AS ${sql.text}`);
  try {
    await client.query(`SET plan_cache_mode = force_generic_plan`);
    // EXECUTE takes no bind parameters: the test's own values, as quoted literals
    const literal = (value: unknown) => pg.escapeLiteral(Array.isArray(value) ? `{${value.join(',')}}` : String(value));
    const generic = await client.query(
      `${explain} EXECUTE q${values.length === 0 ? '' : `(${values.map(literal).join(', ')})`}`,
    );
    return [custom, generic].map((result) => result.rows.map(planText).join('\n'));
  } finally {
    await client.query('RESET plan_cache_mode');
    await client.query('DEALLOCATE q');
  }
}

interface PlanNode {
  'Node Type': string;
  Alias?: string;
  Plans?: PlanNode[];
}

/** The functions scanned on the inner side of a nested loop (each scan runs once per outer row). */
function rescannedFunctions(node: PlanNode, inner = false): string[] {
  const here = inner && node['Node Type'] === 'Function Scan' ? [node.Alias ?? '?'] : [];
  // A hash or a materialized copy is built once, whatever the loop.
  const below = node['Node Type'] === 'Hash' || node['Node Type'] === 'Materialize' ? false : inner;
  const children = (node.Plans ?? []).flatMap((child, i) =>
    rescannedFunctions(child, below || (node['Node Type'] === 'Nested Loop' && i === 1)),
  );
  return [...here, ...children];
}

describe('PostgreSQL query plans with a deep queue (after ANALYZE)', () => {
  const schema = schemas.next();
  let store: PostgresStore;
  let client: pg.Client;

  beforeAll(async () => {
    const clock = new TestClock();
    store = await PostgresStore.open({ database: pgUrl(schema), clock });
    await seedDeepQueue(store, clock);
    client = await adminClient(schema);
    await client.query('ANALYZE');
  });
  afterAll(async () => {
    await client?.end();
    await store?.close();
  });

  const now = Date.UTC(2026, 0, 2);
  const three = <T>(value: T) => [value, value, value];
  // SETTLE_SQL's eleven: three planned successes, then their timeline rows (a trail row first)
  const timeline = [
    [1, 'STARTED', true],
    [1, 'SUCCEEDED', false],
    [2, 'SUCCEEDED', false],
  ].map(([job_id, event, trail]) => ({ job_id, ts: now, event, actor: 'worker', detail: 'x', trail }));
  const SUCCESSES = [
    [1, 2, 3],
    ['a', 'b', 'c'],
    three(now),
    ['1', '2', '3'],
    three('SUCCEEDED'),
    three('x'),
    three('x'),
    [1.5, 2, 3],
    [1, 2, 3],
    now,
    JSON.stringify(timeline),
  ];
  // LEASE_SQL.outcomes' nineteen: a requeue, a finish and a release, then two timeline rows
  const OUTCOMES = [
    [1, 2, 3],
    ['a', 'b', 'c'],
    three(now),
    now,
    [1, 1, 1],
    ['FAILED', 'FAILED', 'CANCELLED'],
    ['E', 'E', 'LEASE:RELEASED'],
    three('x'),
    [1.5, 2, 3],
    [1, 2, 3],
    three('s'),
    ['requeue', 'finishBadly', 'release'],
    ['QUEUED', 'FAILED', 'QUEUED'],
    three(now),
    [1, 2],
    [now, now],
    ['RETRY_SCHEDULED', 'FAILED'],
    ['worker', 'worker'],
    ['x', 'y'],
  ];
  // [what, statement, values, the index it must use (null: any index), a sort of a handful of rows is fine]
  const cases: [string, { text: string }, unknown[], string | null, boolean][] = [
    ['claim (one class)', LEASE_SQL.claimOneClass, ['email', 'w9', now, now + 30_000, 10, 5], 'jobs_claim', false],
    ['sweeper: expired leases', LEASE_SQL.expired, [now, 100], 'jobs_lease_expiry', false],
    ["a job's parents", JOB_SQL.parentsOf, [1], 'job_dependencies_pkey', false],
    // its page (at most `limit` rows) sorted by id after the join
    ["a job's children", JOB_SQL.childrenOf, [1, 50], 'job_dependencies_parent', true],
    // show and the dashboard count them only past the first page
    ["a job's children counted", JOB_SQL.countChildren, [50_001], 'job_dependencies_parent', false],
    // sorted by id for the lock order: one owner's held rows, a claim batch at most
    ['supervisor: jobs held by a dead child', LEASE_SQL.heldByOwner, ['w1'], 'jobs_owner', true],
    ['health watch: full rows an owner holds', LEASE_SQL.heldRowsByOwner, ['w1'], 'jobs_owner', false],
    // by key; a generic plan may instead walk the small partial index of held rows (when that is as cheap)
    [
      'heartbeat of several leases',
      LEASE_SQL.extendMany,
      [[1, 2, 3], ['a', 'b', 'c'], now, now + 30_000, ['x', 'y', 'z']],
      null,
      true,
    ],
    [
      'settle: facts of several leases',
      LEASE_SQL.heldFactsMany,
      [
        [1, 2, 3],
        ['a', 'b', 'c'],
      ],
      null,
      true,
    ],
    // one statement: the held rows by key (sorted by id for the lock order), the events in batch order, the claim through jobs_claim
    ['settle: the successes of a batch', SETTLE_SQL.successes, SUCCESSES, null, true],
    [
      'settle: a batch of successes and the next claim, in one statement',
      SETTLE_SQL.successesThenClaimOneClass,
      [...SUCCESSES, 'email', 'w9', now + 30_000, 10, 5],
      'jobs_claim',
      true,
    ],
    // requeue, finish badly, release: three rows by key, the attempts by key, the timeline rows in order
    ['settle: the other outcomes of a batch', LEASE_SQL.outcomes, OUTCOMES, null, true],
    // one seek per class (or per status), then a sort of at most `limit` rows from each
    ['list by status', JOB_SQL.listByStatus, ['CANCELLED', 20, 40_000], 'jobs_class_status', true],
    ['list by class', JOB_SQL.listByClass, ['sms', 20, 40_000], 'jobs_class_status', true],
    // `list --status WAITING`, and with a class: the deep queue's waiting jobs are all of one class
    ['list by status: WAITING', JOB_SQL.listByStatus, ['WAITING', 20, 60_000], 'jobs_class_status', true],
    ['list by class: report, whose jobs wait', JOB_SQL.listByClass, ['report', 20, 60_000], 'jobs_class_status', true],
    ['list by class and status: WAITING', JOB_SQL.listByClassStatus, ['report', 'WAITING', 20, 60_000], null, false],
    // a common pair may walk the primary key backwards instead, stopping after `limit` rows
    ['list by class and status', JOB_SQL.listByClassStatus, ['sms', 'QUEUED', 20, 40_000], null, false],
    ['timeline of a job', HISTORY_SQL.eventList, [1], 'job_events_job', false],
    ['log lines of a job', HISTORY_SQL.logList, [1], 'job_logs_pkey', false],
    // waitFor: the jobs waited for, by key; events: the terminal events after a position (those from before
    // migration 12 first, then by txid), a sort of at most two pages; the newest of them, a sort of two rows
    ['jobs waited for that ended', OUTCOME_SQL.ended, [[1, 2, 3]], 'jobs_pkey', false],
    ['outcomes after a position', OUTCOME_SQL.after, ['0', 0, 1_000], 'job_events_outcomes', true],
    ['outcomes after a later position', OUTCOME_SQL.after, ['1000', 5, 1_000], 'job_events_outcomes', true],
    ['the newest outcome', OUTCOME_SQL.latest, [], 'job_events_outcomes', true],
    ['live workers of a host', WORKER_SQL.liveOnHost, ['h1'], 'workers_live', false],
    // the dashboard
    ['list by error code', JOB_SQL.listFailedByCode, ['E:1', 20, 40_000], 'jobs_failed', true],
    ['list by class and error code', JOB_SQL.listFailedByClassCode, ['email', 'E:1', 20, 40_000], 'jobs_failed', false],
    ['jobs by idempotency key', JOB_SQL.listByKey, ['key-100'], 'jobs_idempotency', true],
    ['job by class and idempotency key', JOB_SQL.listByClassKey, ['email', 'key-100'], 'jobs_idempotency', false],
    ['FAILED jobs counted', JOB_SQL.countFailed, [], 'jobs_failed', false],
    ['FAILED jobs of a class counted', JOB_SQL.countFailedOfClass, ['email'], null, false],
    ['FAILED jobs of an error code counted', JOB_SQL.countFailedWithCode, ['E:1'], 'jobs_failed', false],
    [
      'FAILED jobs of a class and code counted',
      JOB_SQL.countFailedOfClassWithCode,
      ['email', 'E:1'],
      'jobs_failed',
      false,
    ],
    // bulk actions, a batch at a time below the newest id the confirmation counted; the deep queue's few
    // FAILED jobs of a class may be read from the bitmap of their index and sorted
    ['retry of every FAILED job', JOB_SQL.retryAllFailed, [now, 40_000, 500], null, true],
    ['retry of a class', JOB_SQL.retryClassFailed, [now, 'email', 40_000, 500], 'jobs_class_status', true],
    ['retry of an error code', JOB_SQL.retryCodeFailed, [now, 'E:1', 40_000, 500], 'jobs_failed', false],
    [
      'retry of a class and error code',
      JOB_SQL.retryClassCodeFailed,
      [now, 'email', 'E:1', 40_000, 500],
      'jobs_failed',
      false,
    ],
    ['cancel of every QUEUED job', JOB_SQL.cancelAllQueued, [now, 40_000, 500], 'jobs_class_status', false],
    ["cancel of a class's QUEUED jobs", JOB_SQL.cancelClassQueued, [now, 'email', 40_000, 500], null, false],
    // sorted at the end: the seeks find the classes last first, and there are few
    ['classes present', STATS_SQL.classesPresent, [], 'jobs_class_status', true],
    ['counts of a class by status', STATS_SQL.countsOfClass, ['email'], 'jobs_class_status', true],
    // a seek in jobs_claim per priority of each class present, then a sort of one row per priority
    ['oldest due job per class', STATS_SQL.oldestDue, [now], 'jobs_claim', true],
    [
      'throughput per minute',
      STATS_SQL.finishedByMinute,
      [...partValues(windowOf(now - 60_000)), now],
      'jobs_finished',
      true,
    ],
    // a seek per terminal status
    [
      'stats catch-up: the first job that ended in a window',
      ROLLUP_SQL.firstEnded,
      [now - 86_400_000, now],
      'jobs_finished',
      false,
    ],
    ['children that crashed lately', WORKER_SQL.crashes, [now - 60_000, now - 6_000, 100], 'workers_exited', true],
    // disabled_classes holds a row per class a live supervisor disabled: read whole, each supervisor by key
    ['disabled classes', CLASS_SQL.disabledList, [now - 6_000], 'workers_pkey', true],
  ];

  it.each(cases)('%s walks an index, custom and generic plan alike', async (_name, sql, values, index, sortAllowed) => {
    for (const plan of await plans(client, sql, values)) {
      expect(plan).toMatch(index === null ? /Index (Only )?Scan/ : new RegExp(`(using|Index Scan on) ${index}\\b`));
      expect(plan).not.toMatch(/Seq Scan on (jobs|job_attempts|workers|job_events)/);
      if (!sortAllowed) expect(plan).not.toMatch(/\bSort\b/);
    }
  });

  // A nested loop runs its inner side once per outer row: a batch's arrays unnested there are read n² times.
  it.each([
    ['settle: the successes of a batch', SETTLE_SQL.successes, SUCCESSES],
    [
      'settle: successes and the next claim',
      SETTLE_SQL.successesThenClaimOneClass,
      [...SUCCESSES, 'email', 'w9', now + 30_000, 10, 5],
    ],
    ['settle: the other outcomes of a batch', LEASE_SQL.outcomes, OUTCOMES],
    [
      'heartbeat of several leases',
      LEASE_SQL.extendMany,
      [[1, 2, 3], ['a', 'b', 'c'], now, now + 30_000, ['x', 'y', 'z']],
    ],
    [
      'attempts by token',
      HISTORY_SQL.attemptsByToken,
      [
        [1, 2, 3],
        ['a', 'b', 'c'],
      ],
    ],
    [
      "zombies' timeline rows",
      HISTORY_SQL.eventInsertIfJob,
      [
        [1, 2],
        [now, now],
        ['A', 'B'],
        ['worker', 'worker'],
        ['x', 'y'],
      ],
    ],
    [
      'revival of cancelled dependents',
      FLOW_SQL.revive,
      [
        [1, 2, 3],
        [1, 1, 1],
      ],
    ],
  ] as [string, { text: string }, unknown[]][])(
    '%s reads its arrays once, never again for each row',
    async (_name, sql, values) => {
      for (const plan of await plans(client, sql, values, 'json'))
        expect(rescannedFunctions(JSON.parse(plan)[0].Plan)).toEqual([]);
    },
  );

  it('stats: the cost ranking finds the window through jobs_finished and job_attempts_error, each success by its key, never a whole table', async () => {
    for (const plan of await plans(client, STATS_SQL.costRanking, [...partValues(windowOf(LAST_HOUR_SINCE)), 10])) {
      expect(plan).toMatch(/using jobs_finished\b/);
      expect(plan).toMatch(/using job_attempts_error\b/);
      expect(plan).toMatch(/Index Scan using job_attempts_pkey/);
      expect(plan).not.toMatch(/Seq Scan on (jobs|job_attempts)/);
    }
  });

  it('the claim walks the queue in ORDER BY order: claims come back highest priority, oldest first', async () => {
    const claimed = await claimJobs(store, { classes: ['sms'], ownerId: 'w2', limit: 5, leaseMs: 30_000 });
    expect(claimed.map((job) => job.priority)).toEqual([6, 6, 6, 6, 6]);
  });
});

describe('PostgreSQL query plans with one class whose jobs all ended (after VACUUM ANALYZE)', () => {
  const schema = schemas.next();
  let store: PostgresStore;
  let client: pg.Client;

  beforeAll(async () => {
    store = await PostgresStore.open({ database: pgUrl(schema) });
    const queue = new Queue(store);
    for (let start = 0; start < ENDED_JOBS; start += 10_000)
      await queue.enqueueMany(Array.from({ length: 10_000 }, () => ({ class: 'email' })));
    client = await adminClient(schema);
    // The shape a drained burst leaves once autovacuum has been by (its rows as the settle writes them).
    await client.query(`UPDATE jobs SET status = 'SUCCEEDED', finished_at = run_at, attempts = 1`);
    await client.query('VACUUM ANALYZE jobs');
  });
  afterAll(async () => {
    await client?.end();
    await store?.close();
  });

  // Statistics that say one class and one status: a count per status must still walk the narrow index, not the
  // table once per status.
  it('counts of a class by status walk jobs_class_status alone, as the store reads them', async () => {
    await client.query(`BEGIN; ${IN_INDEX}`);
    try {
      for (const plan of await plans(client, STATS_SQL.countsOfClass, ['email'])) {
        expect(plan).toMatch(/Index Only Scan using jobs_class_status\b/);
        expect(plan).not.toMatch(/Seq Scan on jobs|using jobs_pkey/);
      }
    } finally {
      await client.query('ROLLBACK');
    }
  });
});
