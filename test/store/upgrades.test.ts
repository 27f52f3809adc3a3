/**
 * Upgrades from every version: a database built at each earlier step of each
 * driver (the shipped steps up to N, run as that version ran them), holding
 * a finished job, a job whose holder died mid-run and a queued one, is
 * opened by this build, which migrates it to the latest step. Then the reads
 * an operator makes and a drain work on it: the dead holder's lease is taken
 * back, and every job ends SUCCEEDED.
 */
import { describe, expect, it } from 'vitest';
import { Queue } from '../../src/queue/queue.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';
import { TestClock } from '../helpers/clock.js';
import { claimJobs, completeIfHeld } from '../helpers/fenced-writes.js';
import { adminClient, pgUrl, schemaPool } from '../helpers/postgres.js';
import { sqliteMigratedThrough } from '../helpers/sqlite-at-version.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';
import { SWEEP } from './conformance.js';

const newDir = tempDir('leasehold-upgrade-');
const schemas = schemaPool('lh_upgrade');
const NOW = 1_800_000_000_000;

/** Rows in the columns of step 1, which every later step keeps: one job finished, one held by a dead worker, one queued. */
const JOBS_IN_FLIGHT_AND_FINISHED = `
  INSERT INTO jobs (id, class, status, payload, result, created_at, run_at, finished_at, attempts, max_retries)
    VALUES (1, 'email', 'SUCCEEDED', '{"n":1}', '"sent"', ${NOW - 60_000}, ${NOW - 60_000}, ${NOW - 50_000}, 1, 3);
  INSERT INTO jobs (id, class, status, payload, created_at, run_at, claimed_at, started_at, heartbeat_at,
                    lease_expires_at, owner_id, lease_token, attempts, max_retries)
    VALUES (2, 'email', 'RUNNING', '{"n":2}', ${NOW - 40_000}, ${NOW - 40_000}, ${NOW - 30_000}, ${NOW - 30_000},
            ${NOW - 30_000}, ${NOW - 20_000}, 'old-host:1:dead/email.0.1', 'token-2', 1, 3);
  INSERT INTO jobs (id, class, status, payload, created_at, run_at, max_retries)
    VALUES (3, 'email', 'QUEUED', '{"n":3}', ${NOW - 10_000}, ${NOW - 10_000}, 3);
  INSERT INTO job_attempts (job_id, attempt, owner_id, lease_token, started_at, finished_at, status)
    VALUES (1, 1, 'old-host:1:dead/email.0.1', 'token-1', ${NOW - 55_000}, ${NOW - 50_000}, 'SUCCEEDED'),
           (2, 1, 'old-host:1:dead/email.0.1', 'token-2', ${NOW - 30_000}, NULL, 'RUNNING');
  INSERT INTO job_events (job_id, ts, event, actor, detail)
    VALUES (1, ${NOW - 60_000}, 'ENQUEUED', 'app', '{}'), (1, ${NOW - 50_000}, 'SUCCEEDED', 'old-host', '{}'),
           (2, ${NOW - 40_000}, 'ENQUEUED', 'app', '{}'), (3, ${NOW - 10_000}, 'ENQUEUED', 'app', '{}');
`;

/** What an operator reads, then a drain: the sweeper takes job 2 back, a worker runs 2 and 3. */
async function readAndDrain(store: Store, clock: TestClock): Promise<void> {
  const queue = new Queue(store, { clock, unknownClass: 'ignore' });
  expect(await queue.get(1)).toMatchObject({ job: { status: 'SUCCEEDED', result: 'sent' } });
  expect((await queue.list({ class: 'email' })).map((job) => job.id)).toEqual([3, 2, 1]);
  const stats = await queue.stats();
  expect(stats.in_flight).toEqual([expect.objectContaining({ id: 2 })]);
  expect(stats.queues).toEqual([expect.objectContaining({ class: 'email' })]);

  const [taken] = await store.leasesRecoverExpired({ ...SWEEP, retryDelay: () => 0, limit: 10 });
  expect(taken).toMatchObject({ id: 2, status: 'QUEUED', begun: true, released: false });
  const claimed = await claimJobs(store, {
    classes: ['email'],
    ownerId: 'new-host:1:x/email.0.1',
    limit: 10,
    leaseMs: 30_000,
  });
  expect(claimed.map((job) => job.id).sort()).toEqual([2, 3]);
  for (const job of claimed) await completeIfHeld(store, { id: job.id, leaseToken: job.leaseToken, result: null });
  for (const id of [1, 2, 3]) expect((await store.jobGet({ id }))?.status).toBe('SUCCEEDED');
  const next = await queue.enqueue({ class: 'email' });
  expect(next.id).toBeGreaterThan(3);
}

describe('upgrading a SQLite file from every earlier version', () => {
  const earlier = SQLITE_MIGRATIONS.slice(0, -1).map((migration) => migration.version);

  it.each(earlier)('from version %i', async (version) => {
    const path = dbPathIn(newDir());
    const before = sqliteMigratedThrough(path, version);
    before.exec(JOBS_IN_FLIGHT_AND_FINISHED);
    before.close();

    const clock = new TestClock(NOW);
    const store = await SqliteStore.open({ path, clock });
    try {
      const versions = store.connection.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
      expect(versions).toEqual(SQLITE_MIGRATIONS.map((m) => m.version));
      expect(store.connection.prepare('PRAGMA foreign_key_check').all()).toEqual([]);
      await readAndDrain(store, clock);
    } finally {
      await store.close();
    }
  });
});

describe('upgrading a PostgreSQL schema from every earlier version', () => {
  const earlier = POSTGRES_MIGRATIONS.slice(0, -1).map((migration) => migration.version);

  it.each(earlier)('from version %i', async (version) => {
    const schema = schemas.next();
    const before = await adminClient(schema);
    try {
      await before.query(`CREATE SCHEMA ${schema}`);
      await before.query(
        'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
      );
      for (const migration of POSTGRES_MIGRATIONS.filter((m) => m.version <= version)) {
        await before.query(migration.sql);
        await before.query('INSERT INTO schema_migrations VALUES ($1, $2, 0)', [migration.version, migration.name]);
      }
      await before.query(JOBS_IN_FLIGHT_AND_FINISHED);
      // Ids were given explicitly, as an older build's own inserts would have drawn them.
      await before.query(`SELECT setval(pg_get_serial_sequence('jobs', 'id'), 3)`);
    } finally {
      await before.end();
    }

    const clock = new TestClock(NOW);
    const store = await PostgresStore.open({ database: pgUrl(schema), clock });
    try {
      await readAndDrain(store, clock);
    } finally {
      await store.close();
    }
  });
});
