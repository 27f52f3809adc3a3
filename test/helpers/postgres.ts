import pg from 'pg';
import { afterAll } from 'vitest';

/** The PostgreSQL server the suites run against (CI starts it). Unreachable: the suites fail, they never skip. */
export const PG_URL = process.env.LEASEHOLD_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let serial = 0;

/** A schema name no other test (or test process) uses. */
export function uniqueSchema(prefix = 'lh_test'): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${serial++}`;
}

/** The URL of a queue in `schema`, with leasehold's other URL parameters. */
export function pgUrl(schema: string, params: Record<string, string> = {}): string {
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.toString();
}

/** One plain connection for a test's own look at the server (EXPLAIN, catalogs, DROP SCHEMA). */
export async function adminClient(schema?: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: PG_URL,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
  });
  await client.connect();
  return client;
}

export async function dropSchemas(names: string[]): Promise<void> {
  if (names.length === 0) return;
  const client = await adminClient();
  try {
    await client.query(`SET lock_timeout = '${DROP_LOCK_TIMEOUT}'`);
    for (const name of names) await dropSchema(client, name);
  } finally {
    await client.end();
  }
}

const DROP_LOCK_TIMEOUT = '10s';

/**
 * A schema is unique to its file: a session still holding a lock in it when
 * the file ends was left by its tests (a fault test's frozen connection, an
 * open transaction). Its holders are named and ended, then the drop is made
 * again, where the drop used to wait for them past the hook's timeout.
 */
async function dropSchema(client: pg.Client, name: string): Promise<void> {
  const drop = `DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(name)} CASCADE`;
  try {
    await client.query(drop);
  } catch (error) {
    if ((error as { code?: string }).code !== '55P03') throw error; // lock_not_available
    const { rows } = await client.query<{ pid: number; state: string; query: string }>(
      `SELECT DISTINCT a.pid, a.state, a.query, pg_terminate_backend(a.pid)
         FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE n.nspname = $1 AND a.pid <> pg_backend_pid()`,
      [name],
    );
    console.warn(`schema ${name} was held after its tests by ${JSON.stringify(rows)}: ended them to drop it`);
    await client.query(drop);
  }
}

/** Schemas handed out by `next()` are dropped by `dropAll()` and, whatever happens, after the file's tests. */
export function schemaPool(prefix?: string): { next: () => string; dropAll: () => Promise<void> } {
  const created: string[] = [];
  const dropAll = async () => dropSchemas(created.splice(0));
  afterAll(dropAll);
  return {
    next: () => {
      const name = uniqueSchema(prefix);
      created.push(name);
      return name;
    },
    dropAll,
  };
}
