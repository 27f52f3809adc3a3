import type Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { retryDelayMs } from '../../backoff.js';

export type SqliteDb = Database.Database;

/**
 * better-sqlite3 is CommonJS: require() skips the scan of its exports that
 * an ES import makes, a cost every short CLI run would pay.
 */
const BetterSqlite3 = createRequire(import.meta.url)('better-sqlite3') as typeof Database;

/**
 * How long a statement waits for another connection's lock inside SQLite.
 * That wait blocks the event loop (heartbeats, IPC, timers), so it is kept
 * short: a healthy writer holds the lock for a millisecond or two. A longer
 * hold (a checkpoint, an operator's shell in BEGIN EXCLUSIVE) is waited out
 * between tries, with the event loop free (`withBusyRetry`).
 */
export const BUSY_TIMEOUT_MS = 200;
/** Tries after the first: with the waits between them, a lock held about 4 s in all before the caller hears of it. */
const BUSY_RETRIES = 8;

/**
 * Checkpoint once the WAL holds this many pages (8 MiB), not SQLite's 1,000:
 * fewer copies of the same hot pages, but not so many that one checkpoint
 * holds up the committing process's event loop (the figures:
 * docs/performance.md).
 */
export const WAL_AUTOCHECKPOINT_PAGES = 2_000;

/**
 * Open a database file with the pragmas every connection needs: foreign keys
 * (for ON DELETE CASCADE), WAL (readers never block the writer), a busy
 * timeout, synchronous=NORMAL, which in WAL mode is durable across a
 * process crash (only an OS crash can lose the last commits), the
 * checkpoint interval, and temporary b-trees in memory: a claim's
 * UPDATE ... WHERE id IN (SELECT ...) lists its keys in one, and with
 * temp_store=FILE each statement would set up and drop a temp file's pager:
 * freshly faulted pages on every claim, even one that takes nothing.
 */
export function openSqlite(path: string): SqliteDb {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new BetterSqlite3(path, { timeout: BUSY_TIMEOUT_MS });
  db.pragma('foreign_keys = ON');
  withBusyRetrySync(() => db.pragma('journal_mode = WAL'));
  db.pragma('synchronous = NORMAL');
  db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  db.pragma('temp_store = MEMORY');
  return db;
}

/** The file as it is, read only: nothing written to it (not even WAL mode), and none made where there is none (SQLITE_CANTOPEN). */
export function openSqliteReadOnly(path: string): SqliteDb {
  return new BetterSqlite3(path, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
}

export function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT' || code === 'SQLITE_LOCKED';
}

/** Between two tries: 10 ms doubling to 1 s, with jitter. */
const TRY_AGAIN = { baseSeconds: 0.01, maxSeconds: 1, jitter: true };
const backoffMs = (attempt: number) => retryDelayMs(TRY_AGAIN, attempt + 1);

/**
 * The busy timeout covers almost every wait; this covers what it gives up
 * on, without blocking the event loop.
 */
export async function withBusyRetry<T>(work: () => T): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return work();
    } catch (error) {
      if (!isBusyError(error) || attempt >= BUSY_RETRIES) throw error;
    }
    await sleep(backoffMs(attempt));
  }
}

/** For the few places that must stay synchronous (opening): a blocking wait between tries. */
function withBusyRetrySync<T>(work: () => T): T {
  for (let attempt = 0; ; attempt++) {
    try {
      return work();
    } catch (error) {
      if (!isBusyError(error) || attempt >= BUSY_RETRIES) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, backoffMs(attempt));
    }
  }
}

// An interface (not an alias) so declaration files can name it.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Statement extends Database.Statement<unknown[], unknown> {}

/**
 * A named set of statements, each prepared once, on first use: a CLI
 * command runs a few of the 75, and paid for preparing them all at open.
 * Getters, not a property set later, keep the record's shape fixed.
 */
export function prepareAll<K extends string>(db: SqliteDb, sql: Record<K, string>): Record<K, Statement> {
  const prepared = {} as Record<K, Statement>;
  for (const name of Object.keys(sql) as K[]) {
    let statement: Statement | undefined;
    Object.defineProperty(prepared, name, { enumerable: true, get: () => (statement ??= db.prepare(sql[name])) });
  }
  return prepared;
}
