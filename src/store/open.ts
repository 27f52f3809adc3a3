import type { Clock } from '../clock.js';
import { InvalidInputError } from '../errors.js';
import type { Store } from './types.js';
import { isPostgresUrl } from './database-url.js';

/**
 * Open the store a `database` setting names: a file path (SQLite) or a
 * postgres:// / postgresql:// URL (PostgreSQL; `?schema=name` puts the queue
 * in its own schema, created if missing, `?clock_skew_ms=` sets an
 * extra margin the sweeper waits past a lease's end, and `?listen=off` makes workers poll
 * without LISTEN; see src/store/postgres/connection.ts).
 * Its time (`store.clock`) is the driver's own unless `clock` is given.
 */
export async function openStore(
  database: string,
  options: {
    clock?: Clock;
    statementTimeoutMs?: number;
    /**
     * false: a database or schema without leasehold's tables is refused
     * (SCHEMA:MISSING, naming where it looked and the command that
     * creates them), never given them: what a read command opens with.
     */
    create?: boolean;
  } = {},
): Promise<Store> {
  const { clock, create = true } = options;
  if (database.trim() === '')
    throw new InvalidInputError('DATABASE', 'database must be a file path or a postgres:// URL');
  // Each driver is loaded only when asked for: a SQLite command never pays for the PostgreSQL client.
  if (isPostgresUrl(database))
    return (await import('./postgres/store.js')).PostgresStore.open({
      database,
      clock,
      statementTimeoutMs: options.statementTimeoutMs,
      create,
    });
  return (await sqliteDriver()).SqliteStore.open({ path: database, clock, create });
}

/**
 * Create leasehold's tables in `database`, or bring them up to this
 * version: `leasehold migrate` from code, for an application's own setup or
 * tests. `openQueue` creates nothing; `supervise` migrates at start.
 */
export async function migrate(options: { database: string }): Promise<void> {
  await (await openStore(options.database)).close();
}

/**
 * better-sqlite3 is an optional dependency: a PostgreSQL-only application
 * installs without it (`npm install --omit=optional`), and builds nothing.
 * A SQLite database then says which package to install.
 */
async function sqliteDriver(): Promise<typeof import('./sqlite/store.js')> {
  try {
    return await import('./sqlite/store.js');
  } catch (error) {
    const missing = (error as { code?: unknown }).code === 'MODULE_NOT_FOUND' && /better-sqlite3/.test(String(error));
    if (!missing) throw error;
    throw new InvalidInputError(
      'DATABASE',
      'a SQLite database needs the better-sqlite3 package, which is not installed (it is an optional dependency of leasehold): npm install better-sqlite3',
    );
  }
}
