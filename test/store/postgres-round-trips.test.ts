import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_RETRIES } from '../../src/limits.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import type { ClaimedJob, ClaimRequest, Settlement } from '../../src/store/types.js';
import { TestClock } from '../helpers/clock.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';

const schemas = schemaPool('lh_trips');

/** What `work` sends to the server, in order: one entry per query, a round trip each (a named statement by its name). */
async function sentBy(work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    sent.push(typeof config === 'string' ? config : (config as { name: string }).name);
    return (query as (...args: unknown[]) => unknown).call(this, config, ...rest);
  } as typeof query;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = query;
  }
  return sent;
}

const CLASS = 'trips';
const claimOf = (limit: number): ClaimRequest => ({
  classes: [CLASS],
  ownerId: 'w1',
  limit,
  leaseMs: 30_000,
  classMaxRetries: DEFAULT_MAX_RETRIES,
});
const success = (job: ClaimedJob): Settlement => ({
  id: job.id,
  leaseToken: job.leaseToken,
  startedAt: null,
  verdict: { type: 'complete', result: null },
  claim: job,
});
const failure = (job: ClaimedJob): Settlement => ({
  id: job.id,
  leaseToken: job.leaseToken,
  startedAt: null,
  verdict: { type: 'fail', error: { code: 'E:NO', detail: 'no', retryable: true }, retryDelayMs: 1_000 },
  claim: job,
});

/**
 * The round trips of a worker's batch on PostgreSQL do not grow with the
 * batch: every row of a kind goes in one multi-row statement.
 */
describe('PostgreSQL round trips of a worker batch', () => {
  const clock = new TestClock();
  let store: PostgresStore;

  beforeAll(async () => {
    store = await PostgresStore.open({ database: pgUrl(schemas.next()), clock });
  });
  afterEach(async () => {
    await store.leasesReleaseByOwner({ ownerId: 'w1', actor: 'test', reason: 'next case' });
  });
  afterAll(async () => {
    await store?.close();
    await schemas.dropAll();
  });

  async function claimed(count: number): Promise<ClaimedJob[]> {
    await store.jobInsert({
      jobs: Array.from({ length: count + 1 }, () => ({
        class: CLASS,
        payload: '{}',
        priority: 0,
        runAt: clock.now(),
        maxRetries: 3,
        maxRetriesFromClass: false,
        idempotencyKey: null,
      })),
      actor: 'test',
    });
    return claimJobs(store, claimOf(count));
  }

  it.each([1, 8])('%i successes with the next claim: one statement', async (count) => {
    const jobs = await claimed(count);
    const sent = await sentBy(() => store.jobsSettle({ settlements: jobs.map(success), claim: claimOf(1) }));
    expect(sent).toEqual(['leasehold.settle.successesThenClaimOneClass']);
  });

  it.each([1, 8])(
    '%i failures with the next claim: the facts read and locked, then one statement for all',
    async (count) => {
      const jobs = await claimed(count);
      const sent = await sentBy(() => store.jobsSettle({ settlements: jobs.map(failure), claim: claimOf(1) }));
      expect(sent).toEqual([
        'BEGIN',
        'leasehold.leases.heldFactsMany',
        'leasehold.leases.outcomes',
        'leasehold.leases.claimOneClass',
        'COMMIT',
      ]);
    },
  );

  it('a take-back of a dead worker\u2019s jobs: one statement for all', async () => {
    await claimed(8);
    const sent = await sentBy(() => store.leasesReleaseByOwner({ ownerId: 'w1', actor: 'test', reason: 'gone' }));
    expect(sent).toEqual(['BEGIN', 'leasehold.leases.heldByOwner', 'leasehold.leases.outcomes', 'COMMIT']);
  });
});

/**
 * What an idle host sends each second: every supervisor of every host
 * heartbeats its registry rows and rolls up the stats, on a queue where
 * nothing may have happened since.
 */
describe('PostgreSQL round trips of an idle host', () => {
  const clock = new TestClock();
  let store: PostgresStore;

  beforeAll(async () => {
    store = await PostgresStore.open({ database: pgUrl(schemas.next()), clock });
    await store.workerRegister({
      id: 'sup-1',
      kind: 'supervisor',
      host: 'h',
      supervisorId: null,
      pid: process.pid,
      class: null,
      state: 'ready',
      restarts: 0,
    });
  });
  afterAll(async () => {
    await store?.close();
  });

  it('a heartbeat: one statement', async () => {
    expect(await sentBy(() => store.workerHeartbeat({ id: 'sup-1' }))).toEqual(['leasehold.workers.heartbeat']);
  });

  it('a roll-up with nothing new to sum: one look', async () => {
    while ((await store.statsRollUp({ maxMinutes: 5 })) >= 5);
    clock.advance(10_000);
    expect(await sentBy(() => store.statsRollUp({ maxMinutes: 5 }))).toEqual(['leasehold.rollup.due']);
  });
});
