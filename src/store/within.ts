/**
 * The application's own connection, for an enqueue that commits or rolls
 * back with the application's writes: the types the library accepts, and the
 * refusal each driver gives the other driver's kind.
 */
import { InvalidInputError } from '../errors.js';
import type { InsertedJob, NewJob } from './data.js';

/*
 * Both are what leasehold uses of them, written out, so that the package's
 * types need neither @types/pg nor @types/better-sqlite3 in the application.
 */

/** A node-postgres `Client` or `PoolClient` on which the application began a transaction. */
export interface ApplicationClient {
  query(config: { name?: string; text: string; values?: unknown[] }): Promise<{ rows: unknown[] }>;
  /**
   * node-postgres 8.12 and later: `I` idle, `T` in a transaction, `E` in a
   * failed one. Required, so that a `pg.Pool` (which has none, and commits
   * each query on its own) is refused by the type as at run time.
   */
  getTransactionStatus(): string | null;
}

/** The application's better-sqlite3 `Database`, open on the queue's file. */
export interface ApplicationDatabase {
  readonly name: string;
  readonly inTransaction: boolean;
  prepare(source: string): unknown;
  transaction(fn: (...args: never[]) => unknown): unknown;
}

/**
 * A producer's writes and reads on the application's Database, synchronous
 * because a better-sqlite3 transaction cannot span an await.
 */
export interface SyncProducer {
  /** Inside the application's transaction (in a savepoint of it), or in one of its own when none is open. */
  jobInsert(params: { jobs: NewJob[]; actor: string }): InsertedJob[];
  workerClassServed(params: { class: string }): boolean;
  workerServedClasses(params: { limit: number }): string[];
}

export function wrongDriver(queueDriver: 'sqlite' | 'postgres'): InvalidInputError {
  return queueDriver === 'sqlite'
    ? new InvalidInputError(
        'TX',
        'this queue is on SQLite: enqueue in your transaction with enqueueSync(request, { tx: db }), db your better-sqlite3 Database on the same file',
      )
    : new InvalidInputError(
        'TX',
        'this queue is on PostgreSQL: enqueue in your transaction with await enqueue(request, { tx: client }), client the pg client that ran BEGIN',
      );
}
