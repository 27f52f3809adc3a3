/**
 * Where a benchmark's queue lives: a SQLite file in its folder, or a schema
 * of its own on the PostgreSQL server (dropped when the measurement ends),
 * and a second connection that counts rows while the queue runs.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';
import { probeBackendEnding, probeBackendStarted } from './common.js';
import type { BenchContext } from './context.js';

export type Driver = 'sqlite' | 'postgres';

/** Counting queries (in the driver's SQL dialect) as functions, on a connection of their own. */
export interface RowCounter {
  count(sql: string, ...params: unknown[]): () => Promise<number>;
  close(): Promise<void>;
}

/** A read-only SQLite connection (WAL: it never blocks a writer). */
export class SqliteCounter implements RowCounter {
  private readonly db: Database.Database;
  constructor(file: string) {
    this.db = new Database(file, { readonly: true, fileMustExist: true });
  }

  count(sql: string, ...params: unknown[]): () => Promise<number> {
    const statement = this.db.prepare(sql).pluck();
    return async () => Number(statement.get(...params));
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

/** One PostgreSQL session whose search_path is the queue's schema. */
class PostgresCounter implements RowCounter {
  private constructor(
    private readonly client: pg.Client,
    private readonly backendPid: number,
  ) {}

  static async open(baseUrl: string, schema: string): Promise<PostgresCounter> {
    const client = new pg.Client({ connectionString: baseUrl, options: `-c search_path=${schema}` });
    await client.connect();
    const { pid } = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!;
    probeBackendStarted(pid);
    return new PostgresCounter(client, pid);
  }

  count(sql: string, ...params: unknown[]): () => Promise<number> {
    return async () => Number(Object.values((await this.client.query(sql, params)).rows[0] ?? {})[0] ?? 0);
  }

  async close(): Promise<void> {
    probeBackendEnding(this.backendPid);
    await this.client.end();
  }
}

export interface BenchDatabase {
  readonly driver: Driver;
  /** The `database:` setting for queue.yaml and openStore. */
  readonly url: string;
  /** A counting connection (opened once the queue's tables exist). */
  counter(): Promise<RowCounter>;
  /** PostgreSQL: drop the schema (with `--keep`, leave it). SQLite: the file goes with its folder. */
  dispose(): Promise<void>;
}

/** The SQLite file of a measurement's queue in its folder. */
export function sqliteFile(dir: string): string {
  return join(dir, 'queue.db');
}

let schemas = 0;

/**
 * A fresh queue for one measurement in `dir`. On PostgreSQL the schema is
 * `leasehold_bench_<pid>_<n>`; `listen: false` adds `listen=off` (children
 * poll instead of waiting on NOTIFY).
 */
export function benchDatabase(
  ctx: BenchContext,
  dir: string,
  driver: Driver,
  options: { listen?: boolean } = {},
): BenchDatabase {
  if (driver === 'sqlite') {
    const file = sqliteFile(dir);
    return { driver, url: file, counter: async () => new SqliteCounter(file), dispose: async () => undefined };
  }
  const schema = `leasehold_bench_${process.pid}_${++schemas}`;
  const url = new URL(ctx.pgUrl);
  url.searchParams.set('schema', schema);
  if (options.listen === false) url.searchParams.set('listen', 'off');
  return {
    driver,
    url: url.toString(),
    counter: () => PostgresCounter.open(ctx.pgUrl, schema),
    dispose: async () => {
      if (ctx.keep) {
        ctx.progress(`kept schema ${schema}`);
        return;
      }
      const client = new pg.Client({ connectionString: ctx.pgUrl });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
