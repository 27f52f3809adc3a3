/**
 * Enqueue on the application's own pg client, inside the transaction it
 * began, on the real server: the job commits or rolls back with the
 * application's rows, its wake-up comes on commit, and leasehold leaves the
 * application's transaction and search_path as it found them.
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/open.js';
import { InvalidInputError } from '../../src/errors.js';
import { openQueue, type Queue } from '../../src/queue/queue.js';
import { JOBS_CHANNEL } from '../../src/store/postgres/sql/notify.js';
import { PG_URL, pgUrl, schemaPool } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';

const schemas = schemaPool('lh_within');

describe('enqueue({ tx }) on PostgreSQL', () => {
  let queueSchema: string;
  let appSchema: string;
  let queue: Queue;
  let app: pg.Client;
  let look: pg.Client;

  beforeAll(async () => {
    queueSchema = schemas.next();
    appSchema = schemas.next();
    await migrate({ database: pgUrl(queueSchema) });
    queue = await openQueue({ database: pgUrl(queueSchema), unknownClass: 'ignore' });
    // The application's client sees only its own schema: leasehold must find its tables itself.
    app = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${appSchema}` });
    await app.connect();
    await app.query(`CREATE SCHEMA ${appSchema}`);
    await app.query('CREATE TABLE orders (id serial PRIMARY KEY, item text NOT NULL)');
    look = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${queueSchema}` });
    await look.connect();
  });
  afterAll(async () => {
    await app?.end();
    await look?.end();
    await queue?.close();
  });
  beforeEach(async () => {
    await look.query('DELETE FROM jobs');
    await app.query('DELETE FROM orders');
  });

  const jobCount = async () => Number((await look.query('SELECT count(*) AS n FROM jobs')).rows[0].n);
  const orderCount = async () => Number((await app.query('SELECT count(*) AS n FROM orders')).rows[0].n);

  it('leaves nothing after a rollback', async () => {
    await app.query('BEGIN');
    await app.query(`INSERT INTO orders (item) VALUES ('book')`);
    const job = await queue.enqueue({ class: 'email', payload: { to: 'a@example.com' } }, { tx: app });
    expect(await jobCount()).toBe(0); // not visible to others before the commit
    await app.query('ROLLBACK');
    expect(await jobCount()).toBe(0);
    expect(await orderCount()).toBe(0);
    expect((await look.query('SELECT count(*) AS n FROM job_events WHERE job_id = $1', [job.id])).rows[0].n).toBe('0');
  });

  it('commits the job, its ENQUEUED event and its wake-up with the application', async () => {
    const listener = new pg.Client({ connectionString: PG_URL });
    await listener.connect();
    const heard: string[] = [];
    // The channel is shared by every schema on the server (files run side by side): hear only this queue's.
    listener.on('notification', (message) => {
      if (message.payload?.startsWith(`${queueSchema}:`)) heard.push(message.payload);
    });
    await listener.query(`LISTEN ${JOBS_CHANNEL}`);
    try {
      await app.query('BEGIN');
      await app.query(`INSERT INTO orders (item) VALUES ('book')`);
      const [first, second] = await queue.enqueueMany([{ class: 'email' }, { class: 'email', key: 'k1' }], {
        tx: app,
      });
      expect(typeof first!.id).toBe('number'); // BIGINT as a number, though the application's client parses it as text
      await listener.query('SELECT 1'); // a round trip: a notification sent now would have arrived
      expect(heard).toEqual([]);
      await app.query('COMMIT');
      await waitFor('the wake-up', () => heard.includes(`${queueSchema}:email`), { timeoutMs: 5_000 });
      const rows = (await look.query('SELECT id, status FROM jobs ORDER BY id')).rows;
      expect(rows).toEqual([
        { id: String(first!.id), status: 'QUEUED' },
        { id: String(second!.id), status: 'QUEUED' },
      ]);
      const events = (await look.query(`SELECT event, actor FROM job_events WHERE job_id = $1`, [first!.id])).rows;
      expect(events).toEqual([{ event: 'ENQUEUED', actor: 'producer' }]);
    } finally {
      await listener.end();
    }
  });

  it("puts the application's search_path back", async () => {
    await app.query('BEGIN');
    await queue.enqueue({ class: 'email' }, { tx: app });
    expect((await app.query('SHOW search_path')).rows[0].search_path).toBe(appSchema);
    await app.query(`INSERT INTO orders (item) VALUES ('pen')`); // resolves in the application's schema
    await app.query('COMMIT');
    expect(await orderCount()).toBe(1);
  });

  it('refuses a bad request before sending anything: the transaction stays usable', async () => {
    await app.query('BEGIN');
    await app.query(`INSERT INTO orders (item) VALUES ('book')`);
    await expect(queue.enqueue({ class: 'email', priority: 1.5 }, { tx: app })).rejects.toMatchObject({
      code: 'INVALID_INPUT:PRIORITY',
    });
    await app.query('COMMIT');
    expect(await orderCount()).toBe(1);
    expect(await jobCount()).toBe(0);
  });

  it("rolls a failed statement back to its savepoint, not the application's transaction", async () => {
    // A trigger stands for any statement that fails midway on the server.
    await look.query(`CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.class = 'boom' THEN RAISE EXCEPTION 'boom refused'; END IF; RETURN NEW; END $$`);
    await look.query('CREATE TRIGGER refuse_boom BEFORE INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION refuse_boom()');
    try {
      await app.query('BEGIN');
      await app.query(`INSERT INTO orders (item) VALUES ('book')`);
      await queue.enqueue({ class: 'email' }, { tx: app });
      await expect(queue.enqueueMany([{ class: 'email' }, { class: 'boom' }], { tx: app })).rejects.toThrow(
        'boom refused',
      );
      expect((await app.query('SHOW search_path')).rows[0].search_path).toBe(appSchema);
      await app.query('COMMIT');
      expect(await orderCount()).toBe(1);
      expect((await look.query('SELECT class FROM jobs')).rows).toEqual([{ class: 'email' }]);
    } finally {
      await look.query('DROP TRIGGER refuse_boom ON jobs; DROP FUNCTION refuse_boom()');
    }
  });

  it('refuses a client outside a transaction, and a SQLite-only call', async () => {
    await expect(queue.enqueue({ class: 'email' }, { tx: app })).rejects.toMatchObject({ code: 'INVALID_INPUT:TX' });
    expect(await jobCount()).toBe(0);
    expect(() => queue.enqueueSync({ class: 'email' }, { tx: {} as never })).toThrow(InvalidInputError);
  });

  it('refuses a Pool, which would commit the job on its own, and anything without a transaction status', async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    try {
      const refusal = queue.enqueue({ class: 'email' }, { tx: pool as never });
      await expect(refusal).rejects.toMatchObject({ code: 'INVALID_INPUT:TX' });
      await expect(refusal).rejects.toThrow(/pool\.connect\(\).*BEGIN/);
      const bare = { query: (config: unknown) => app.query(config as pg.QueryConfig) };
      await expect(queue.enqueue({ class: 'email' }, { tx: bare as never })).rejects.toMatchObject({
        code: 'INVALID_INPUT:TX',
      });
      expect(await jobCount()).toBe(0);
      expect(pool.totalCount).toBe(0); // refused before any query reached the pool
    } finally {
      await pool.end();
    }
  });
});
