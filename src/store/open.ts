import { systemClock, type Clock } from '../clock.js';
import { InvalidInputError } from '../errors.js';
import { SqliteStore } from './sqlite/store.js';
import type { Store } from './types.js';

export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//.test(database);
}

/** Open the store a `database` setting names: a file path (SQLite) or a postgres:// URL. */
export async function openStore(database: string, options: { clock?: Clock } = {}): Promise<Store> {
  const clock = options.clock ?? systemClock;
  if (database.trim() === '') throw new InvalidInputError('DATABASE', 'database must be a file path or a postgres:// URL');
  if (isPostgresUrl(database)) {
    throw new InvalidInputError('DATABASE', 'PostgreSQL is not supported yet: use a SQLite file path');
  }
  return SqliteStore.open({ path: database, clock });
}
