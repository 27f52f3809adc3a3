/**
 * One table of outcome cases, each run on both drivers and through both
 * paths: "fast" (the holder passes its claim record, so PostgreSQL writes a
 * batch of successes in one statement without reading the rows first) and
 * "general" (no record: the store reads and locks the facts, then plans).
 * The rules live once, in src/store/outcomes.ts; this table fails when a
 * driver or a path writes something else. It compares the rows of jobs,
 * job_attempts and job_events field by field (ids and lease tokens named,
 * not numbered), and each case states what the rule must give.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { ClaimedJob, Settlement, Store, Verdict } from '../../src/store/types.js';
import { TestClock } from '../helpers/clock.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';

const LEASE_MS = 30_000;
const OWNER = 'host-a/child-1';
const COST = { cpuMs: 1.5, peakRssBytes: 4096 };
const schemas = schemaPool('lh_outcomes');
const newDir = tempDir();
afterAll(schemas.dropAll);

type Path = 'fast' | 'general';
const DRIVERS: Record<string, (clock: TestClock) => Promise<Store>> = {
  sqlite: (clock) => SqliteStore.open({ path: dbPathIn(newDir()), clock }),
  postgres: (clock) => PostgresStore.open({ database: pgUrl(schemas.next()), clock }),
};

interface Case {
  /** Jobs in the batch, each with its own max_retries. */
  maxRetries: number[];
  /** Write each job's start before the outcome (the slow-job way), or leave it to the outcome (lazily). */
  startWritten: boolean;
  verdict: Verdict;
  before?: (store: Store, jobs: ClaimedJob[], clock: TestClock) => Promise<void>;
  /** Claim the next job with the batch (a second job is enqueued for it). */
  claimNext?: boolean;
  /**
   * Jobs enqueued once the batch is claimed, each waiting on `parents`: positions in the batch, then in this
   * list (an earlier dependent). Their rows follow the batch's in `expect`.
   */
  dependents?: { parents: number[]; onParentFailure?: 'run' }[];
  /** What the rule must give: each job's status, and its timeline's event names. */
  expect: { status: string; events: string[] }[];
}

/** The lease runs out, and the sweeper takes the job back. */
async function sweepAfterLease(store: Store, _jobs: ClaimedJob[], clock: TestClock): Promise<void> {
  clock.advance(LEASE_MS + 1);
  await store.leasesRecoverExpired({
    errorCode: 'LEASE:EXPIRED',
    errorDetail: 'lease expired',
    event: 'RECOVERED',
    actor: 'sweeper',
    retryDelay: () => 0,
    limit: 10,
  });
}

const success: Verdict = { type: 'complete', result: '{"ok":true}' };
const failure = (retryable = true): Verdict => ({
  type: 'fail',
  error: { code: 'HANDLER:Error', detail: 'boom', retryable },
  retryDelayMs: 1_000,
});
const release: Verdict = { type: 'release', reason: 'shutdown' };

const CASES: Record<string, Case> = {
  'success, start not yet written': {
    maxRetries: [2],
    startWritten: false,
    verdict: success,
    expect: [{ status: 'SUCCEEDED', events: ['ENQUEUED', 'STARTED', 'SUCCEEDED'] }],
  },
  'success, start already written': {
    maxRetries: [2],
    startWritten: true,
    verdict: success,
    expect: [{ status: 'SUCCEEDED', events: ['ENQUEUED', 'STARTED', 'SUCCEEDED'] }],
  },
  'a batch of two successes, with the next claim': {
    maxRetries: [2, 2],
    startWritten: false,
    verdict: success,
    claimNext: true,
    expect: [
      { status: 'SUCCEEDED', events: ['ENQUEUED', 'STARTED', 'SUCCEEDED'] },
      { status: 'SUCCEEDED', events: ['ENQUEUED', 'STARTED', 'SUCCEEDED'] },
      { status: 'CLAIMED', events: ['ENQUEUED'] },
    ],
  },
  'failure with retries left': {
    maxRetries: [2],
    startWritten: false,
    verdict: failure(),
    expect: [{ status: 'QUEUED', events: ['ENQUEUED', 'STARTED', 'RETRY_SCHEDULED'] }],
  },
  'failure with retries left, start written': {
    maxRetries: [2],
    startWritten: true,
    verdict: failure(),
    expect: [{ status: 'QUEUED', events: ['ENQUEUED', 'STARTED', 'RETRY_SCHEDULED'] }],
  },
  'the last failure': {
    maxRetries: [0],
    startWritten: true,
    verdict: failure(),
    expect: [{ status: 'FAILED', events: ['ENQUEUED', 'STARTED', 'FAILED'] }],
  },
  'a failure that may not retry': {
    maxRetries: [2],
    startWritten: false,
    verdict: failure(false),
    expect: [{ status: 'FAILED', events: ['ENQUEUED', 'STARTED', 'FAILED'] }],
  },
  'cancel requested, then the failure': {
    maxRetries: [2],
    startWritten: true,
    verdict: failure(),
    before: async (store, jobs) => void (await store.jobCancel({ id: jobs[0]!.id, actor: 'cli' })),
    expect: [{ status: 'CANCELLED', events: ['ENQUEUED', 'STARTED', 'CANCELLED', 'CANCELLED'] }],
  },
  'cancel requested, then a success': {
    maxRetries: [2],
    startWritten: false,
    verdict: success,
    before: async (store, jobs) => void (await store.jobCancel({ id: jobs[0]!.id, actor: 'cli' })),
    expect: [{ status: 'SUCCEEDED', events: ['ENQUEUED', 'CANCELLED', 'STARTED', 'SUCCEEDED'] }],
  },
  'release before the start': {
    maxRetries: [2],
    startWritten: false,
    verdict: release,
    expect: [{ status: 'QUEUED', events: ['ENQUEUED', 'CLAIMED', 'RELEASED'] }],
  },
  'release after the start': {
    maxRetries: [2],
    startWritten: true,
    verdict: release,
    expect: [{ status: 'QUEUED', events: ['ENQUEUED', 'STARTED', 'RELEASED'] }],
  },
  'flow: the last parent succeeds': {
    maxRetries: [2],
    startWritten: false,
    verdict: success,
    dependents: [{ parents: [0] }],
    expect: [
      { status: 'SUCCEEDED', events: ['ENQUEUED', 'STARTED', 'SUCCEEDED'] },
      { status: 'QUEUED', events: ['ENQUEUED', 'DEPENDENCIES_MET'] },
    ],
  },
  'flow: two parents succeed in one batch': {
    maxRetries: [2, 2],
    startWritten: true,
    verdict: success,
    dependents: [{ parents: [0, 1] }, { parents: [1] }],
    expect: [
      { status: 'SUCCEEDED', events: ['ENQUEUED', 'STARTED', 'SUCCEEDED'] },
      { status: 'SUCCEEDED', events: ['ENQUEUED', 'STARTED', 'SUCCEEDED'] },
      { status: 'QUEUED', events: ['ENQUEUED', 'DEPENDENCIES_MET'] },
      { status: 'QUEUED', events: ['ENQUEUED', 'DEPENDENCIES_MET'] },
    ],
  },
  'flow: a parent retries, its dependents wait': {
    maxRetries: [2],
    startWritten: false,
    verdict: failure(),
    dependents: [{ parents: [0] }],
    expect: [
      { status: 'QUEUED', events: ['ENQUEUED', 'STARTED', 'RETRY_SCHEDULED'] },
      { status: 'WAITING', events: ['ENQUEUED'] },
    ],
  },
  'flow: a parent fails, a chain of three is cancelled, one that runs anyway is queued': {
    maxRetries: [0],
    startWritten: true,
    verdict: failure(),
    dependents: [{ parents: [0] }, { parents: [1] }, { parents: [2] }, { parents: [0], onParentFailure: 'run' }],
    expect: [
      { status: 'FAILED', events: ['ENQUEUED', 'STARTED', 'FAILED'] },
      { status: 'CANCELLED', events: ['ENQUEUED', 'CANCELLED'] },
      { status: 'CANCELLED', events: ['ENQUEUED', 'CANCELLED'] },
      { status: 'CANCELLED', events: ['ENQUEUED', 'CANCELLED'] },
      { status: 'QUEUED', events: ['ENQUEUED', 'DEPENDENCIES_MET'] },
    ],
  },
  'flow: a parent taken back by the sweeper with no retry left cancels its dependent': {
    maxRetries: [0],
    startWritten: true,
    verdict: success,
    dependents: [{ parents: [0] }],
    before: sweepAfterLease,
    expect: [
      { status: 'FAILED', events: ['ENQUEUED', 'STARTED', 'RECOVERED', 'FAILED', 'ZOMBIE_WRITE_REJECTED'] },
      { status: 'CANCELLED', events: ['ENQUEUED', 'CANCELLED'] },
    ],
  },
  'lease lost: it ran out': {
    maxRetries: [2],
    startWritten: false,
    verdict: success,
    before: async (_store, _jobs, clock) => clock.advance(LEASE_MS),
    expect: [{ status: 'CLAIMED', events: ['ENQUEUED', 'ZOMBIE_WRITE_REJECTED'] }],
  },
  'lease lost: taken back by the sweeper': {
    maxRetries: [2],
    startWritten: true,
    verdict: success,
    before: sweepAfterLease,
    expect: [
      { status: 'QUEUED', events: ['ENQUEUED', 'STARTED', 'RECOVERED', 'RETRY_SCHEDULED', 'ZOMBIE_WRITE_REJECTED'] },
    ],
  },
};

/** Runs a case on a fresh store; returns its rows, each job's ids and tokens replaced by names. */
async function runCase(open: (clock: TestClock) => Promise<Store>, c: Case, path: Path): Promise<unknown[]> {
  const clock = new TestClock();
  const store = await open(clock);
  try {
    const ids: number[] = [];
    const newJob = (maxRetries: number) => ({
      class: 'email',
      payload: '{}',
      priority: 0,
      runAt: clock.now(),
      maxRetries,
      maxRetriesFromClass: false,
      idempotencyKey: null,
    });
    for (const maxRetries of c.maxRetries) {
      const [job] = await store.jobInsert({ jobs: [newJob(maxRetries)], actor: 'test' });
      ids.push(job!.id);
      clock.advance(1);
    }
    if (c.claimNext) await store.jobInsert({ jobs: [newJob(2)], actor: 'test' });
    clock.advance(10);
    const jobs = await claimJobs(store, {
      classes: ['email'],
      ownerId: OWNER,
      limit: c.maxRetries.length,
      leaseMs: LEASE_MS,
    });
    for (const dependent of c.dependents ?? []) {
      const parentIds = dependent.parents.map((at) => ids[at]!);
      const policy = dependent.onParentFailure === undefined ? {} : { onParentFailure: dependent.onParentFailure };
      const [job] = await store.jobInsert({ jobs: [{ ...newJob(2), parentIds, ...policy }], actor: 'test' });
      ids.push(job!.id);
    }
    clock.advance(10);
    const record = (job: ClaimedJob) =>
      path === 'fast' ? { claim: { attempt: job.attempt, ownerId: job.ownerId, claimedAt: job.claimedAt } } : {};
    if (c.startWritten)
      for (const job of jobs)
        await store.jobStart({ id: job.id, leaseToken: job.leaseToken, leaseMs: LEASE_MS, ...record(job) });
    clock.advance(10);
    await c.before?.(store, jobs, clock);
    clock.advance(10);
    const startedAt = c.startWritten || c.verdict.type === 'release' ? null : clock.now() - 25;
    const settlements: Settlement[] = jobs.map((job) => ({
      id: job.id,
      leaseToken: job.leaseToken,
      startedAt,
      verdict: c.verdict,
      cost: COST,
      ...record(job),
    }));
    const claim = c.claimNext
      ? { classes: ['email'], ownerId: OWNER, limit: 1, leaseMs: LEASE_MS, classMaxRetries: 5 }
      : undefined;
    await store.jobsSettle({ settlements, claim });
    const all = [...ids, ...(c.claimNext ? [ids.at(-1)! + 1] : [])];
    return await Promise.all(all.map((id) => rowsOf(store, id, all)));
  } finally {
    await store.close();
  }
}

async function rowsOf(store: Store, id: number, ids: number[]) {
  const tokens = new Map<string, string>();
  const name = (value: unknown): unknown => {
    if (typeof value === 'number' && ids.includes(value)) return `job#${ids.indexOf(value)}`;
    if (typeof value !== 'string' || !/^[0-9a-f]{32}$/.test(value)) return value;
    if (!tokens.has(value)) tokens.set(value, `token#${tokens.size}`);
    return tokens.get(value);
  };
  const named = (row: object) =>
    Object.fromEntries(
      Object.entries(row).map(([key, value]) => [
        key,
        key === 'id' && !('job_id' in row) ? name(value) : key === 'id' ? 'row' : name(value),
      ]),
    );
  const job = await store.jobGet({ id });
  const attempts = await store.attemptList({ jobId: id });
  const events = await store.eventList({ jobId: id });
  return {
    job: named(job!),
    attempts: attempts.map(named),
    events: events.map((event) => ({
      ...named(event),
      detail: String(event.detail).replace(/[0-9a-f]{32}/g, 'token'),
    })),
  };
}

describe('outcome rules: one table, both drivers, both paths', () => {
  it.each(Object.entries(CASES))('%s', async (_name, c) => {
    const results: Record<string, unknown[]> = {};
    for (const [driver, open] of Object.entries(DRIVERS))
      for (const path of ['fast', 'general'] as const) results[`${driver} ${path}`] = await runCase(open, c, path);
    const [first, ...others] = Object.entries(results);
    for (const [variant, rows] of others) expect({ variant, rows }).toEqual({ variant, rows: first![1] });
    const jobs = first![1] as { job: { status: string }; events: { event: string }[] }[];
    expect(jobs.map((j) => ({ status: j.job.status, events: j.events.map((e) => e.event) }))).toEqual(c.expect);
  });
});
