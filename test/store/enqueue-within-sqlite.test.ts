/**
 * enqueueSync on the application's own better-sqlite3 Database, on a real
 * file: the job commits or rolls back with the application's rows, also
 * while the application holds the write lock (BEGIN IMMEDIATE), which made
 * the queue's own connection wait, then fail with SQLITE_BUSY.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/open.js';
import { openQueue, type Queue } from '../../src/queue/queue.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';

const newDir = tempDir('leasehold-within-');

describe('enqueueSync({ tx }) on SQLite', () => {
  let path: string;
  let queue: Queue;
  let app: Database.Database;

  beforeEach(async () => {
    path = dbPathIn(newDir());
    await migrate({ database: path });
    queue = await openQueue({ database: path, unknownClass: 'ignore' });
    app = new Database(path);
    app.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL)');
  });
  afterEach(async () => {
    app.close();
    await queue.close();
  });

  const placeOrder = (item: string, fail = false) =>
    app.transaction(() => {
      app.prepare('INSERT INTO orders (item) VALUES (?)').run(item);
      const job = queue.enqueueSync({ class: 'email', payload: { item } }, { tx: app });
      if (fail) throw new Error('the order failed');
      return job;
    });

  it('commits the job with the application rows, while the application holds the write lock', async () => {
    const job = placeOrder('book').immediate();
    const details = await queue.get(job.id);
    expect(details?.job).toMatchObject({ status: 'QUEUED', payload: { item: 'book' } });
    expect(details?.events.map((e) => e.event)).toEqual(['ENQUEUED']);
    expect(app.prepare('SELECT count(*) AS n FROM orders').get()).toEqual({ n: 1 });
  });

  it('leaves nothing when the application rolls back', async () => {
    expect(() => placeOrder('book', true).immediate()).toThrow('the order failed');
    expect(await queue.list()).toEqual([]);
    expect(app.prepare('SELECT count(*) AS n FROM orders').get()).toEqual({ n: 0 });
  });

  it('refuses a bad request before writing, and the transaction goes on', async () => {
    const outcome = app
      .transaction(() => {
        app.prepare('INSERT INTO orders (item) VALUES (?)').run('pen');
        expect(() => queue.enqueueSync({ class: 'email', payload: { n: 10n } }, { tx: app })).toThrow(
          expect.objectContaining({ code: 'INVALID_INPUT:PAYLOAD' }),
        );
        return queue.enqueueSync({ class: 'email', key: 'pen' }, { tx: app });
      })
      .immediate();
    expect((await queue.list()).map((j) => j.id)).toEqual([outcome.id]);
    expect(app.prepare('SELECT count(*) AS n FROM orders').get()).toEqual({ n: 1 });
  });

  it('finds the job holding a key, and commits on its own outside a transaction', async () => {
    const first = queue.enqueueSync({ class: 'email', key: 'k' }, { tx: app });
    const again = queue.enqueueSync({ class: 'email', key: 'k' }, { tx: app });
    expect(again).toEqual({ id: first.id, created: false });
    expect((await queue.get(first.id))?.job.status).toBe('QUEUED');
  });

  it('refuses a Database on another file, and the PostgreSQL-only call', async () => {
    const other = new Database(dbPathIn(newDir(), 'other.db'));
    try {
      expect(() => queue.enqueueSync({ class: 'email' }, { tx: other })).toThrow(
        expect.objectContaining({ code: 'INVALID_INPUT:TX' }),
      );
    } finally {
      other.close();
    }
    await expect(queue.enqueue({ class: 'email' }, { tx: {} as never })).rejects.toMatchObject({
      code: 'INVALID_INPUT:TX',
    });
    expect(await queue.list()).toEqual([]);
  });
});
