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
    for (const name of names) await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(name)} CASCADE`);
  } finally {
    await client.end();
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
