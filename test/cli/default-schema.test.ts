/**
 * A postgres:// URL that names no schema keeps the queue in a schema of its
 * own, `leasehold`, as graphile-worker and pg-boss do: never in the
 * application's `public`. A queue an earlier version left in `public` is
 * found and named, not abandoned for a new empty one. Each test runs in a
 * database of its own, since `public` and `leasehold` are shared names.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { adminClient, PG_URL } from '../helpers/postgres.js';
import { leasehold } from './helpers.js';

const databases: string[] = [];

async function freshDatabase(): Promise<{ url: string; look: (sql: string) => Promise<unknown> }> {
  const name = `lh_default_schema_${process.pid}_${databases.length}`;
  const admin = await adminClient();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  databases.push(name);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  const look = async (sql: string) => {
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return Object.values((await client.query(sql)).rows[0] as object)[0];
    } finally {
      await client.end();
    }
  };
  return { url: url.toString(), look };
}

afterAll(async () => {
  const admin = await adminClient();
  try {
    for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
});

describe('a PostgreSQL URL without ?schema=', () => {
  it('keeps the queue in the schema `leasehold`, and puts nothing in `public`', async () => {
    const { url, look } = await freshDatabase();
    const migrate = await leasehold(['--db', url, 'migrate']);
    expect(migrate.exitCode, migrate.stderr).toBe(0);
    expect(await look(`SELECT to_regclass('leasehold.jobs') IS NOT NULL`)).toBe(true);
    expect(await look(`SELECT count(*)::int FROM pg_tables WHERE schemaname = 'public'`)).toBe(0);

    const enqueue = await leasehold([
      '--db',
      url,
      'enqueue',
      'email',
      '--payload',
      '{}',
      '--allow-unknown-class',
      '--json',
    ]);
    expect(enqueue.exitCode, enqueue.stderr).toBe(0);
    expect(
      await look(`SELECT class FROM leasehold.jobs WHERE id = ${(JSON.parse(enqueue.stdout) as { id: number }).id}`),
    ).toBe('email');
    const list = await leasehold(['--db', url, 'list', '--json']);
    expect(list.exitCode, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { jobs: unknown[] }).jobs).toHaveLength(1);
  });

  it('finds a queue an earlier version left in `public`, names it, and creates no other', async () => {
    const { url, look } = await freshDatabase();
    const inPublic = new URL(url);
    inPublic.searchParams.set('schema', 'public');
    await (await openStore(inPublic.toString())).close();

    const said = `no leasehold queue in schema "leasehold", where a URL without ?schema= keeps it, but one in "public", where earlier versions kept it: add ?schema=public to ${url} to go on using it`;
    await expect(openStore(url)).rejects.toMatchObject({ code: 'SCHEMA:MISSING', message: said });
    for (const command of [['list'], ['migrate']]) {
      const run = await leasehold(['--db', url, ...command]);
      expect(run.exitCode, run.stderr).toBe(2);
      expect(run.stderr).toBe(`leasehold: ${said}`);
    }
    expect(await look(`SELECT count(*)::int FROM pg_namespace WHERE nspname = 'leasehold'`)).toBe(0);

    const named = await leasehold(['--db', inPublic.toString(), 'list']);
    expect(named.exitCode, named.stderr).toBe(0);
  });
});
