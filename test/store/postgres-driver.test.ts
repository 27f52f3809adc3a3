import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { InvalidInputError } from '../../src/errors.js';
import { Queue } from '../../src/queue/queue.js';
import { openStore } from '../../src/store/open.js';
import { clientConfig, DEFAULT_CLOCK_SKEW_MS, parsePostgresUrl } from '../../src/store/postgres/connection.js';
import { MIGRATION_LOCK_CLASS, POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { TestClock } from '../helpers/clock.js';
import { adminClient, pgUrl, schemaPool } from '../helpers/postgres.js';
import { migrateAtOnce } from '../helpers/migrate-race.js';
import { waitFor } from '../helpers/wait.js';
import { SWEEP } from './conformance.js';
import { claimJobs } from '../helpers/fenced-writes.js';

const schemas = schemaPool('lh_pg');

describe('PostgreSQL schema and migrations', () => {
  it('three processes migrating the same new schema at the same moment all end up fine', async () => {
    for (let round = 0; round < 5; round++) {
      const schema = schemas.next();
      expect(await migrateAtOnce(pgUrl(schema))).toEqual([0, 0, 0]);
      const client = await adminClient(schema);
      const versions = (await client.query('SELECT version FROM schema_migrations ORDER BY version')).rows.map(
        (r) => r.version,
      );
      await client.end();
      expect(versions).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
    }
  });

  describe('a migrated schema', () => {
    const schema = schemas.next();
    let store: PostgresStore;
    const columns = async (table: string) => {
      const client = await adminClient();
      const result = await client.query(
        'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
        [schema, table],
      );
      await client.end();
      return Object.fromEntries(result.rows.map((r) => [r.column_name, r.data_type])) as Record<string, string>;
    };

    beforeAll(async () => {
      store = await PostgresStore.open({ database: pgUrl(schema), clock: systemClock });
    });
    afterAll(async () => {
      await store?.close();
    });

    it('has the column names of the contract, times as BIGINT epoch ms and JSON as TEXT', async () => {
      const jobs = await columns('jobs');
      expect(Object.keys(jobs)).toEqual(
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
      for (const time of [
        'created_at',
        'run_at',
        'claimed_at',
        'started_at',
        'heartbeat_at',
        'lease_expires_at',
        'finished_at',
      ]) {
        expect(jobs[time], time).toBe('bigint');
      }
      expect([jobs.id, jobs.payload, jobs.result]).toEqual(['bigint', 'text', 'text']);
      expect(Object.keys(await columns('job_attempts'))).toEqual(
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
          'error_stack',
          'cpu_ms',
          'peak_rss_bytes',
        ]),
      );
      expect(Object.keys(await columns('job_events'))).toEqual(
        expect.arrayContaining(['job_id', 'ts', 'event', 'actor', 'detail']),
      );
      expect(Object.keys(await columns('workers'))).toEqual(
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
    });

    it('deletes attempts, events, log lines and edges with their job (ON DELETE CASCADE)', async () => {
      const client = await adminClient();
      const result = await client.query(
        `SELECT conrelid::regclass::text AS child, confdeltype FROM pg_constraint
         WHERE contype = 'f' AND connamespace = $1::regnamespace ORDER BY 1`,
        [schema],
      );
      await client.end();
      expect(result.rows).toEqual([
        { child: `${schema}.job_attempts`, confdeltype: 'c' },
        { child: `${schema}.job_dependencies`, confdeltype: 'c' },
        { child: `${schema}.job_dependencies`, confdeltype: 'c' },
        { child: `${schema}.job_events`, confdeltype: 'c' },
        { child: `${schema}.job_logs`, confdeltype: 'c' },
      ]);
    });

    it('opens a current schema in one look at its ledger, not waiting on another process migrating it', async () => {
      const migrating = await adminClient();
      try {
        await migrating.query('BEGIN');
        await migrating.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))', [
          MIGRATION_LOCK_CLASS,
          schema,
        ]);
        const opening = PostgresStore.open({ database: pgUrl(schema), clock: systemClock });
        const opened = await Promise.race([opening, sleep(10_000, undefined, { ref: false })]);
        await migrating.query('ROLLBACK');
        await (opened ?? (await opening)).close();
        expect(opened).toBeInstanceOf(PostgresStore);
      } finally {
        await migrating.end();
      }
    });

    it('migrating again changes nothing, and reports its version', async () => {
      await store.migrate();
      expect(await store.schemaVersion()).toBe(POSTGRES_MIGRATIONS.at(-1)!.version);
      expect(await store.integrityCheck()).toEqual([]);
    });
  });
});

describe('opening a PostgreSQL store', () => {
  it('openStore picks the PostgreSQL driver for postgres:// and postgresql:// URLs', async () => {
    for (const scheme of ['postgres:', 'postgresql:']) {
      const url = new URL(pgUrl(schemas.next()));
      url.protocol = scheme;
      const store = await openStore(url.toString());
      expect(store.driver).toBe('postgres');
      await store.ping();
      await store.close();
      await store.close();
    }
  });

  it('reads its own URL parameters, passes the rest on, and merges server options with the schema', () => {
    const target = parsePostgresUrl(
      'postgres://u@db:5433/q?schema=lh_a&clock_skew_ms=500&listen=off&sslmode=disable&options=-c%20work_mem%3D8MB',
      4_000,
    );
    expect(target).toEqual({
      connectionString: 'postgres://u@db:5433/q?sslmode=disable',
      schema: 'lh_a',
      schemaNamed: true,
      options:
        '-c plan_cache_mode=force_generic_plan -c jit=off -c statement_timeout=4000 -c work_mem=8MB -c search_path=lh_a',
      clockSkewMs: 500,
      listen: false,
      stalledAfterMs: 6_000,
    });
    expect(parsePostgresUrl('postgresql://u@db/q')).toMatchObject({
      schema: 'leasehold',
      schemaNamed: false,
      options: '-c plan_cache_mode=force_generic_plan -c jit=off -c statement_timeout=30000 -c search_path=leasehold',
      clockSkewMs: DEFAULT_CLOCK_SKEW_MS,
      listen: true,
      stalledAfterMs: 45_000,
    });
  });

  it('opens its sessions with generic plans and the schema as search_path', async () => {
    const client = new pg.Client(clientConfig(parsePostgresUrl(pgUrl('lh_settings'))));
    await client.connect();
    try {
      const shown = async (setting: string) =>
        Object.values((await client.query(`SHOW ${setting}`)).rows[0] as object)[0];
      expect([await shown('plan_cache_mode'), await shown('search_path')]).toEqual([
        'force_generic_plan',
        'lh_settings',
      ]);
    } finally {
      await client.end();
    }
  });

  it.each([
    ['a schema name that would need quoting', pgUrl('Bad-Name')],
    ['a negative clock_skew_ms', pgUrl('lh_ok', { clock_skew_ms: '-1' })],
    ['a listen that is neither on nor off', pgUrl('lh_ok', { listen: 'no' })],
  ])('rejects %s before connecting', async (_label, url) => {
    await expect(openStore(url)).rejects.toBeInstanceOf(InvalidInputError);
  });
});

describe('the sweeper on PostgreSQL and the hosts\u2019 clocks', () => {
  it.each([
    ['by default, as soon as it ran out', {}, 0],
    ['with clock_skew_ms=500, that much later', { clock_skew_ms: '500' }, 500],
  ])('takes back a lease %s', async (_label, params, marginMs) => {
    const clock = new TestClock();
    const store = await PostgresStore.open({ database: pgUrl(schemas.next(), params), clock });
    try {
      expect(store.clockSkewMs).toBe(marginMs);
      const { id } = await new Queue(store, { clock }).enqueue({ class: 'email' });
      const [job] = await claimJobs(store, { classes: ['email'], ownerId: 'host-a/1', limit: 1, leaseMs: 10_000 });
      await store.jobStart({ id, leaseToken: job!.leaseToken, leaseMs: 10_000 });
      const sweep = () => store.leasesRecoverExpired({ ...SWEEP, retryDelay: () => 0, limit: 10 });
      clock.advance(10_000 + marginMs);
      expect(await sweep()).toEqual([]);
      clock.advance(1);
      expect(await sweep()).toMatchObject([{ id, status: 'QUEUED' }]);
    } finally {
      await store.close();
    }
  });
});

/** The backends of sessions named `applicationName` whose last statement was a LISTEN (other suites may be listening too). */
async function listenerPids(admin: pg.Client, applicationName: string): Promise<number[]> {
  const result = await admin.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND query LIKE 'LISTEN%'",
    [applicationName],
  );
  return result.rows.map((row) => row.pid);
}

interface ListenRig {
  store: PostgresStore;
  producer: Queue;
  admin: pg.Client;
  /** The store's LISTEN backends (its sessions carry an application_name of their own). */
  storeListeners: () => Promise<number[]>;
}

/** A store (with these URL parameters) and a producer on a fresh schema, and an admin connection to watch LISTEN backends; closed after `work`. */
async function withListenRig(
  storeParams: Record<string, string>,
  work: (rig: ListenRig) => Promise<void>,
): Promise<void> {
  const schema = schemas.next();
  const store = (await openStore(pgUrl(schema, { ...storeParams, application_name: schema }))) as PostgresStore;
  const producer = new Queue(await openStore(pgUrl(schema)));
  const admin = await adminClient();
  try {
    const storeListeners = () => listenerPids(admin, schema);
    await work({ store, producer, admin, storeListeners });
  } finally {
    await admin.end();
    await producer.close();
    await store.close();
  }
}

describe('LISTEN/NOTIFY wake-ups', () => {
  it('tells a subscriber about jobs of its classes in its schema once the enqueue commits, and stops when asked', async () => {
    const schema = schemas.next();
    const other = schemas.next();
    const store = (await openStore(pgUrl(schema))) as PostgresStore;
    const producer = new Queue(await openStore(pgUrl(schema)));
    const otherSchema = new Queue(await openStore(pgUrl(other)));
    try {
      let heard = 0;
      const stop = (await store.subscribe!(['email', 'sms'], () => (heard += 1))).stop;
      // Witnesses: subscribers that must hear what the subscriber under test must not (each on a connection of its own).
      const witnessed = { report: 0, otherEmail: 0, email: 0 };
      const stopWitnesses = [
        (await producer.store.subscribe!(['report'], () => (witnessed.report += 1))).stop,
        (await otherSchema.store.subscribe!(['email'], () => (witnessed.otherEmail += 1))).stop,
        (await producer.store.subscribe!(['email'], () => (witnessed.email += 1))).stop,
      ];
      await producer.enqueue({ class: 'report' });
      await otherSchema.enqueue({ class: 'email' });
      await producer.enqueueMany([{ class: 'email' }, { class: 'email' }, { class: 'sms' }]);
      await producer.enqueue({ class: 'sms' });
      await waitFor('three notifications (one per class in the batch, then the last enqueue)', () => heard >= 3);
      // The report and the other schema's email reached their witnesses; on our connection they came before the last sms.
      await waitFor(
        'the witnesses of the report and of the other schema',
        () => witnessed.report >= 1 && witnessed.otherEmail >= 1,
      );
      expect(heard).toBe(3);

      await stop();
      await stop();
      const emailsBefore = witnessed.email;
      await producer.enqueue({ class: 'email' });
      await waitFor('a subscriber still listening hears the email', () => witnessed.email > emailsBefore);
      expect(heard).toBe(3);
      for (const stopWitness of stopWitnesses) await stopWitness();
    } finally {
      await otherSchema.close();
      await producer.close();
      await store.close();
    }
  });

  it('with listen=off opens no LISTEN connection and never wakes the subscriber: workers poll', async () => {
    await withListenRig({ listen: 'off' }, async ({ store, producer, storeListeners }) => {
      let woken = 0;
      const stop = (await store.subscribe!(['email'], () => (woken += 1))).stop;
      // A witness on the same schema with LISTEN on must hear the enqueue; by then a wake-up of ours would have come too.
      let witnessed = 0;
      const stopWitness = (await producer.store.subscribe!(['email'], () => (witnessed += 1))).stop;
      await producer.enqueue({ class: 'email' });
      await waitFor('the witness hears the enqueue', () => witnessed >= 1);
      expect({ woken, opened: await storeListeners() }).toEqual({ woken: 0, opened: [] });
      await stopWitness();
      await stop();
    });
  });

  it('listens again after its connection is terminated, and wakes the subscriber on reconnect and on a later enqueue', async () => {
    await withListenRig({}, async ({ store, producer, admin, storeListeners }) => {
      let woken = 0;
      const errors: Error[] = [];
      const { stop } = await store.subscribe!(
        ['email'],
        () => (woken += 1),
        (error) => errors.push(error),
      );
      const ours = await waitFor('our LISTEN backend in pg_stat_activity', async () => {
        const fresh = await storeListeners();
        return fresh.length === 1 ? fresh[0] : undefined;
      });
      await producer.enqueue({ class: 'email' });
      await waitFor('the first notification', () => woken >= 1);

      const terminated = Date.now();
      expect((await admin.query('SELECT pg_terminate_backend($1) AS done', [ours])).rows[0].done).toBe(true);
      await waitFor('the break reported', () => errors.length >= 1);
      // one wake-up when the line broke, one once it listens again (notifications in between are lost)
      await waitFor('a new LISTEN backend', async () => (await storeListeners()).some((pid) => pid !== ours));
      await waitFor('the wake-ups of the break and the reconnect', () => woken >= 3);
      console.log(
        `listening again ${Date.now() - terminated} ms after pg_terminate_backend; reported: ${errors[0]?.message}`,
      );

      const settled = woken;
      await producer.enqueue({ class: 'email' });
      await waitFor('a later enqueue still wakes the subscriber', () => woken > settled);

      await stop();
      await stop();
      expect(await storeListeners()).toEqual([]);
    });
  });
});
