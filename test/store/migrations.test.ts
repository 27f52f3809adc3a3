import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { BUSY_TIMEOUT_MS } from '../../src/store/sqlite/connection.js';
import { JOB_SQL } from '../../src/store/sqlite/sql/jobs.js';
import { HISTORY_SQL } from '../../src/store/sqlite/sql/history.js';
import { LEASE_SQL } from '../../src/store/sqlite/sql/leases.js';
import { systemClock } from '../../src/clock.js';
import { holdExclusiveLock } from '../helpers/faults.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { migrateAtOnce } from '../helpers/migrate-race.js';
import { useProcessGuard } from '../helpers/processes.js';
import { sqliteMigratedThrough } from '../helpers/sqlite-at-version.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';

useProcessGuard();
const newDir = tempDir();

/** A new file migrated through `version` (a database an older build left), open for the test to add rows. */
function migratedThrough(version: number) {
  const path = dbPathIn(newDir());
  return { path, before: sqliteMigratedThrough(path, version) };
}

describe('SQLite schema and migrations', () => {
  it('two processes migrating the same new file at the same moment both end up fine', async () => {
    for (let round = 0; round < 5; round++) {
      const path = dbPathIn(newDir());
      expect(await migrateAtOnce(path)).toEqual([0, 0, 0]);
      const db = new Database(path, { readonly: true });
      const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
      expect(versions).toEqual(SQLITE_MIGRATIONS.map((m) => m.version));
      db.close();
    }
  });

  it("opens a current file preparing none of the store's statements: each is prepared on its first use, once", async () => {
    const path = dbPathIn(newDir());
    await (await SqliteStore.open({ path, clock: systemClock })).close();
    const prepare = vi.spyOn(Database.prototype, 'prepare');
    try {
      const store = await SqliteStore.open({ path, clock: systemClock });
      // Only the schema ledger is read at open (a CLI command runs a few of the store's 75 statements).
      expect(prepare.mock.calls.map(([sql]) => sql).filter((sql) => !sql.includes('schema_migrations'))).toEqual([]);
      prepare.mockClear();
      expect(await store.jobGet({ id: 1 })).toBeUndefined();
      expect(await store.jobGet({ id: 2 })).toBeUndefined();
      expect(prepare.mock.calls.map(([sql]) => sql)).toEqual([JOB_SQL.get]);
      await store.close();
    } finally {
      prepare.mockRestore();
    }
  });

  it('opens a file whose schema is current without the write lock: a command reads while another process writes', async () => {
    const path = dbPathIn(newDir());
    await (await SqliteStore.open({ path, clock: systemClock })).close();
    const holder = await holdExclusiveLock(path);
    try {
      const store = await SqliteStore.open({ path, clock: systemClock });
      expect(await store.schemaVersion()).toBe(SQLITE_MIGRATIONS.at(-1)?.version);
      await store.close();
    } finally {
      await holder.release();
    }
  });

  it("migration 8 keeps each job enqueued before it on its own max_retries: a claim does not put its class's in", async () => {
    const { path, before } = migratedThrough(7);
    before
      .prepare(
        `INSERT INTO jobs (class, status, payload, created_at, run_at, max_retries) VALUES ('email', 'QUEUED', '{}', 0, 0, 3)`,
      )
      .run();
    before.close();

    const store = await SqliteStore.open({ path, clock: systemClock });
    const [claimed] = await claimJobs(store, {
      classes: ['email'],
      ownerId: 'w',
      limit: 1,
      leaseMs: 60_000,
      classMaxRetries: 1,
    });
    expect(claimed?.maxRetries).toBe(3);
    expect(await store.jobGet({ id: claimed!.id })).toMatchObject({ max_retries: 3, max_retries_from_class: 0 });
    await store.close();
  });

  it('migration 12 rebuilds jobs with WAITING among its statuses, keeping every attempt, event and log line', async () => {
    const { path, before } = migratedThrough(11);
    before.exec(`
      INSERT INTO jobs (id, class, status, payload, created_at, run_at, max_retries, idempotency_key) VALUES (7, 'email', 'FAILED', '{}', 0, 0, 3, 'k');
      INSERT INTO job_attempts (job_id, attempt, owner_id, lease_token, started_at, status) VALUES (7, 1, 'w', 't', 0, 'FAILED');
      INSERT INTO job_events (job_id, ts, event, actor, detail) VALUES (7, 0, 'ENQUEUED', 'test', '{}');
      INSERT INTO job_logs (job_id, attempt, seq, ts, level, message) VALUES (7, 1, 0, 0, 'info', 'hello');`);
    before.close();

    const store = await SqliteStore.open({ path, clock: systemClock });
    const count = (table: string) => store.connection.prepare(`SELECT count(*) FROM ${table}`).pluck().get();
    expect([count('job_attempts'), count('job_events'), count('job_logs')]).toEqual([1, 1, 1]);
    expect(await store.jobGet({ id: 7 })).toMatchObject({ status: 'FAILED', idempotency_key: 'k' });
    expect(store.connection.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(store.connection.prepare('PRAGMA foreign_key_check').all()).toEqual([]);
    const indexes = store.connection
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'jobs' AND sql IS NOT NULL`)
      .pluck()
      .all();
    expect(indexes).toEqual(
      expect.arrayContaining(['jobs_claim', 'jobs_idempotency', 'jobs_finished', 'jobs_waiting']),
    );
    const insertAfter = async (parentIds: number[], onParentFailure?: 'run') => {
      const job = { class: 'email', payload: '{}', priority: 0, runAt: 0, maxRetries: 0, idempotencyKey: null };
      const policy = onParentFailure === undefined ? {} : { onParentFailure };
      const [inserted] = await store.jobInsert({
        jobs: [{ ...job, maxRetriesFromClass: false, parentIds, ...policy }],
        actor: 'test',
      });
      return inserted!.id;
    };
    const waiting = await insertAfter([7], 'run');
    expect((await store.jobGet({ id: waiting }))?.status).toBe('QUEUED');
    const child = await insertAfter([waiting]);
    expect((await store.jobGet({ id: child }))?.status).toBe('WAITING');
    await store.close();
  });

  it('migration 16 rebuilds jobs and job_events to never give an id twice, keeping rows, ids and indexes', async () => {
    const { path, before } = migratedThrough(15);
    before.exec(`
      INSERT INTO jobs (id, class, status, payload, created_at, run_at, max_retries) VALUES (41, 'email', 'QUEUED', '{}', 0, 0, 3);
      INSERT INTO job_events (id, job_id, ts, event) VALUES (90, 41, 0, 'ENQUEUED');
      INSERT INTO job_logs (job_id, attempt, seq, ts, level, message) VALUES (41, 1, 0, 0, 'info', 'hello');`);
    const indexesOf = (db: Database.Database) =>
      db
        .prepare(
          `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('jobs', 'job_events') AND sql IS NOT NULL ORDER BY name`,
        )
        .pluck()
        .all();
    const indexes = indexesOf(before);
    before.close();

    const store = await SqliteStore.open({ path, clock: systemClock });
    expect(indexesOf(store.connection)).toEqual(indexes);
    expect(store.connection.prepare('PRAGMA foreign_key_check').all()).toEqual([]);
    expect(store.connection.prepare('SELECT count(*) FROM job_logs').pluck().get()).toBe(1);
    store.connection.exec('DELETE FROM jobs WHERE id = 41');
    const [next] = await store.jobInsert({
      jobs: [
        {
          class: 'email',
          payload: '{}',
          priority: 0,
          runAt: 0,
          maxRetries: 0,
          idempotencyKey: null,
          maxRetriesFromClass: false,
        },
      ],
      actor: 'test',
    });
    expect(next!.id).toBe(42);
    expect(store.connection.prepare('SELECT min(id) FROM job_events').pluck().get()).toBe(91);
    await store.close();
  });

  it('sets WAL, foreign keys and a busy timeout on every connection, and cascades deletes', async () => {
    const store = await SqliteStore.open({ path: dbPathIn(newDir()), clock: systemClock });
    const db = store.connection;
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(BUSY_TIMEOUT_MS);
    const cascades = db.prepare(`SELECT "table", on_delete FROM pragma_foreign_key_list(?)`);
    expect(cascades.all('job_attempts')).toEqual([{ table: 'jobs', on_delete: 'CASCADE' }]);
    expect(cascades.all('job_events')).toEqual([{ table: 'jobs', on_delete: 'CASCADE' }]);
    await store.migrate();
    await store.close();
  });

  it('has the column names of the contract', async () => {
    const store = await SqliteStore.open({ path: dbPathIn(newDir()), clock: systemClock });
    const columns = (table: string) =>
      store.connection.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[];
    expect(columns('jobs')).toEqual(
      expect.arrayContaining([
        'id',
        'class',
        'status',
        'priority',
        'payload',
        'result',
        'created_at',
        'run_at',
        'claimed_at',
        'started_at',
        'heartbeat_at',
        'lease_expires_at',
        'finished_at',
        'owner_id',
        'lease_token',
        'attempts',
        'max_retries',
        'max_retries_from_class',
        'error_code',
        'error_detail',
        'idempotency_key',
        'progress',
      ]),
    );
    expect(columns('job_attempts')).toEqual(
      expect.arrayContaining([
        'job_id',
        'attempt',
        'owner_id',
        'lease_token',
        'started_at',
        'finished_at',
        'status',
        'error_code',
        'error_detail',
        'cpu_ms',
        'peak_rss_bytes',
      ]),
    );
    expect(columns('job_events')).toEqual(expect.arrayContaining(['job_id', 'ts', 'event', 'actor', 'detail']));
    expect(columns('workers')).toEqual(
      expect.arrayContaining([
        'id',
        'kind',
        'host',
        'supervisor_id',
        'pid',
        'class',
        'state',
        'started_at',
        'heartbeat_at',
        'exited_at',
        'exit_code',
        'exit_signal',
        'restarts',
      ]),
    );
    await store.close();
  });

  // Step 17: `status IN (<constants>)` built a temporary index at every write of a status (two per success).
  it('step 17: a file at step 16 keeps its rows, a status outside the list is still refused, and no write of a status builds a temporary index', async () => {
    const { path, before } = migratedThrough(16);
    before
      .prepare(
        `INSERT INTO jobs (class, payload, status, max_retries, created_at, run_at) VALUES ('email', '{}', 'QUEUED', 3, 1, 1)`,
      )
      .run();
    // A connection open across the step (a dashboard, a child's reads) reads the new definitions at its next statement.
    const across = before.prepare(`UPDATE jobs SET status = ? WHERE id = 1`);
    const store = await SqliteStore.open({ path, clock: systemClock });
    // (EXPLAIN reads no table, so a connection older than the step would list the program it compiled before it.)
    const after = new Database(path);
    const temporaryIndexes = (sql: string, values: unknown[]) =>
      after
        .prepare(`EXPLAIN ${sql}`)
        .all(...values)
        .filter((op) => (op as { opcode: string }).opcode === 'OpenEphemeral');
    expect(temporaryIndexes(LEASE_SQL.completeHeld, [null, 2, 2, 1, 'token', 'CLAIMED', 2])).toEqual([]);
    expect(
      temporaryIndexes(HISTORY_SQL.attemptFinish, ['SUCCEEDED', 2, null, null, null, 1, 1, 1, 1, 'token']),
    ).toEqual([]);
    after.close();
    expect(() => across.run('DONE')).toThrow(/CHECK constraint failed/);
    expect(() => before.prepare(`UPDATE job_attempts SET status = 'DONE'`).run()).not.toThrow(); // no attempt rows yet
    before
      .prepare(
        `INSERT INTO job_attempts (job_id, attempt, owner_id, lease_token, started_at, status) VALUES (1, 1, 'w', 't', 1, 'RUNNING')`,
      )
      .run();
    expect(() => before.prepare(`UPDATE job_attempts SET status = 'DONE'`).run()).toThrow(/CHECK constraint failed/);
    for (const status of ['WAITING', 'QUEUED', 'CLAIMED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'])
      across.run(status);
    expect(before.prepare('SELECT count(*) FROM jobs').pluck().get()).toBe(1);
    expect(before.pragma('integrity_check', { simple: true })).toBe('ok');
    before.close();
    await store.close();
  });
});
