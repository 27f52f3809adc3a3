/**
 * The stats catch-up, on both drivers: minutes where nothing ended are
 * covered at once, not a few per write transaction, and the first minute
 * where a job ended is summed as any other. On SQLite each of those
 * transactions made the workers wait for the one writer; on PostgreSQL the
 * supervisors of a new queue took turns on the rollup's row lock for
 * hundreds of them while the first jobs ran.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Queue } from '../../src/queue/queue.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';
import { MINUTE_MS } from '../../src/store/stats-window.js';
import { TestClock } from '../helpers/clock.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';

const newDir = tempDir('leasehold-sqlite-catch-up-');
const schemas = schemaPool('lh_catch_up');
const DRIVERS: [string, (clock: TestClock) => Promise<Store>][] = [
  ['SQLite', (clock) => SqliteStore.open({ path: dbPathIn(newDir()), clock })],
  ['PostgreSQL', (clock) => PostgresStore.open({ database: pgUrl(schemas.next()), clock })],
];
const PER_ROLL_UP = 5;
const HOUR_MS = 60 * MINUTE_MS;

describe.each(DRIVERS)('%s stats catch-up', (_driver, open) => {
  let queue: Queue | undefined;
  afterEach(async () => await queue?.close());

  async function openWithOneJob(clock: TestClock): Promise<Store> {
    const store = await open(clock);
    queue = new Queue(store, { clock, unknownClass: 'ignore' });
    await queue.enqueue({ class: 'email' });
    return store;
  }

  /** Roll up until one sums fewer than PER_ROLL_UP minutes, as the supervisor does; how many write transactions that took. */
  async function rollUpsToCatchUp(s: Store): Promise<number> {
    let rollUps = 1;
    while ((await s.statsRollUp({ maxMinutes: PER_ROLL_UP })) >= PER_ROLL_UP) rollUps += 1;
    return rollUps;
  }

  it('covers a day where nothing ended in one roll-up (and one more finds nothing left)', async () => {
    const clock = new TestClock();
    const store = await openWithOneJob(clock);
    expect(await rollUpsToCatchUp(store)).toBe(2);
    expect(await store.statsRollUp({ maxMinutes: PER_ROLL_UP })).toBe(0);
  });

  it('skips to the first minute where a job ended, sums from there, and skips the empty rest', async () => {
    const clock = new TestClock();
    const store = await openWithOneJob(clock);
    const [job] = await claimJobs(store, { classes: ['email'], ownerId: 'owner-a', limit: 1, leaseMs: 60_000 });
    await store.jobsSettle({
      settlements: [
        { id: job!.id, leaseToken: job!.leaseToken, startedAt: null, verdict: { type: 'complete', result: null } },
      ],
    });
    clock.advance(HOUR_MS);
    const since = clock.now() - 2 * HOUR_MS;
    const fromJobs = await store.statsFinishedSince({ since });
    // The empty day before the job, its five minutes, the empty hour after them, and one that finds nothing left.
    expect(await rollUpsToCatchUp(store)).toBe(4);
    expect(await store.statsFinishedSince({ since })).toEqual(fromJobs);
    expect(fromJobs).not.toEqual([]);
  });
});
