/**
 * A command that reads a queue (or changes one it expects there) pointed at
 * a database without leasehold's tables (a PostgreSQL schema, an
 * application's own SQLite file) exits 2 with one line naming where it
 * looked and the command that creates them, and creates nothing: a read
 * command once created 15 tables in an application's `public` schema.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adminClient, pgUrl, schemaPool } from '../helpers/postgres.js';
import { openStore } from '../../src/store/open.js';
import { tempDir } from '../helpers/temp.js';
import { leasehold } from './helpers.js';

const newDir = tempDir('leasehold-no-queue-');
const schemas = schemaPool('lh_no_queue');

/** Read commands, and one that writes to a queue it expects there (`pause`). */
const COMMANDS = [['list'], ['stats', '--json'], ['show', '1'], ['workers'], ['pause', 'email']];

async function schemaExists(name: string): Promise<boolean> {
  const client = await adminClient();
  try {
    return (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}

describe('a command pointed at a database without a queue', () => {
  it('on PostgreSQL: exits 2 naming the schema and `leasehold migrate`, and creates nothing', async () => {
    const schema = schemas.next();
    const url = pgUrl(schema);
    for (const command of COMMANDS) {
      const run = await leasehold(['--db', url, ...command]);
      expect(run.exitCode, `${command.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toBe(
        `leasehold: no leasehold queue in schema "${schema}": \`leasehold migrate --db '${url}'\` creates its tables, as the supervisor does at start`,
      );
    }
    expect(await schemaExists(schema)).toBe(false);

    const migrate = await leasehold(['--db', url, 'migrate']);
    expect(migrate.exitCode, migrate.stderr).toBe(0);
    const list = await leasehold(['--db', url, 'list']);
    expect(list.exitCode, list.stderr).toBe(0);
  });

  it("on an application's own SQLite file: exits 2, and the file gets no table of leasehold's", async () => {
    const file = join(newDir(), 'app.db');
    const app = new Database(file);
    app.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY)');
    app.close();
    for (const command of COMMANDS) {
      const run = await leasehold(['--db', file, ...command]);
      expect(run.exitCode, `${command.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain(`leasehold: no leasehold queue in ${file}: \`leasehold migrate --db '${file}'\``);
    }
    const after = new Database(file, { readonly: true });
    const tables = after.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all();
    const journal = after.pragma('journal_mode', { simple: true });
    after.close();
    expect(tables).toEqual(['orders']);
    expect(journal, 'nothing written: not even WAL mode').toBe('delete');
  });
  it('openStore with create: false on a missing SQLite path: refused, and no file made', async () => {
    const file = join(newDir(), 'missing.db');
    await expect(openStore(file, { create: false })).rejects.toMatchObject({
      code: 'SCHEMA:MISSING',
      message: expect.stringContaining(`no leasehold queue in ${file}`),
    });
    expect(existsSync(file)).toBe(false);
  });
});
