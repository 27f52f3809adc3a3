import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidInputError } from '../../errors.js';
import { retryDelayMs } from '../../backoff.js';
import { DEFAULT_STATEMENT_TIMEOUT_SECONDS } from '../../limits.js';
import { dbFaultOf, isConnectionLost } from '../faults.js';

/** Where a store lives: the server, the schema (search_path), the sweeper's clock-skew margin, and whether workers LISTEN. */
export interface PostgresTarget {
  /** The URL as node-postgres gets it: leasehold's own query parameters removed. */
  connectionString: string;
  /** The URL's `?schema=`, else DEFAULT_SCHEMA. */
  schema: string;
  /** false: the URL named no schema (an earlier version's queue may be in `public`: see refuseQueueLeftInPublic). */
  schemaNamed: boolean;
  /** Server settings for every session (libpq `options`): leasehold's plan cache mode, the URL's own, then the schema's search_path. */
  options: string;
  clockSkewMs: number;
  /** false (`listen=off`): workers only poll, for poolers that cannot keep a LISTEN (PgBouncer in transaction mode). */
  listen: boolean;
  /** How long the client waits for any answer before it takes the connection for stalled (statementTimeoutMs plus a margin). */
  stalledAfterMs: number;
}

/**
 * Default extra margin the sweeper waits past a lease's end before taking
 * it back. None: a healthy holder renews its lease every heartbeat_seconds
 * (at most half the lease), so a sweeping host whose clock runs ahead of the
 * holder's by less than lease_seconds - heartbeat_seconds never takes back a
 * live lease, and a dead host's jobs come back within lease_seconds plus one
 * sweep, as the contract says. The supervisor warns when its clock is off by
 * more than half that slack (CLOCK_OFFSET).
 */
export const DEFAULT_CLOCK_SKEW_MS = 0;
/** A URL without `?schema=` keeps the queue in a schema of its own, as graphile-worker and pg-boss do: never the application's `public`. */
export const DEFAULT_SCHEMA = 'leasehold';
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/**
 * Every statement leasehold runs is named (prepared once per connection)
 * and written to walk its index under a generic plan too (the query-plan
 * tests check both). By default the server plans each execution anew while
 * it guesses a custom plan cheaper, which for the batched outcome statement
 * cost more than running it (0.25 ms of planning per 0.1 ms execution). The
 * URL's own `options` come after, so `-c plan_cache_mode=auto` there wins.
 */
const GENERIC_PLANS = '-c plan_cache_mode=force_generic_plan';
/** Statements this short never repay a JIT compile, which a big table's estimates would trigger for every list. */
const NO_JIT = '-c jit=off';

/**
 * Read leasehold's own query parameters off a postgres:// URL: `schema`
 * (created if missing; lower-case letters, digits and _; DEFAULT_SCHEMA when absent), `clock_skew_ms` and
 * `listen` (`on`, the default, or `off`).
 * Everything else goes to node-postgres as it is, but `options`, which is
 * merged with the schema's search_path.
 */
export function parsePostgresUrl(
  database: string,
  statementTimeoutMs = DEFAULT_STATEMENT_TIMEOUT_SECONDS * 1000,
): PostgresTarget {
  let url: URL;
  try {
    url = new URL(database);
  } catch {
    throw new InvalidInputError('DATABASE', `database is not a valid postgres:// URL: ${database}`);
  }
  const named = url.searchParams.get('schema');
  const schema = named ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(schema)) {
    throw new InvalidInputError(
      'DATABASE',
      `schema must be 1 to 63 lower-case letters, digits or _ (not starting with a digit), got "${schema}"`,
    );
  }
  const skew = url.searchParams.get('clock_skew_ms');
  const clockSkewMs = skew === null ? DEFAULT_CLOCK_SKEW_MS : Number(skew);
  if (!Number.isSafeInteger(clockSkewMs) || clockSkewMs < 0) {
    throw new InvalidInputError('DATABASE', `clock_skew_ms must be a whole number of milliseconds >= 0, got "${skew}"`);
  }
  const listen = url.searchParams.get('listen') ?? 'on';
  if (listen !== 'on' && listen !== 'off')
    throw new InvalidInputError('DATABASE', `listen must be on or off, got "${listen}"`);
  // Settings given in the URL would replace ours (node-postgres lets the URL win): merge them instead.
  const options = [
    GENERIC_PLANS,
    NO_JIT,
    `-c statement_timeout=${Math.ceil(statementTimeoutMs)}`,
    url.searchParams.get('options'),
    `-c search_path=${schema}`,
  ]
    .filter((o) => o !== null)
    .join(' ');
  for (const own of ['schema', 'clock_skew_ms', 'listen', 'options']) url.searchParams.delete(own);
  const stalledAfterMs = Math.ceil(statementTimeoutMs + Math.max(STALL_MARGIN_MS, statementTimeoutMs / 2));
  return {
    connectionString: url.toString(),
    schema,
    schemaNamed: named !== null,
    options,
    clockSkewMs,
    listen: listen === 'on',
    stalledAfterMs,
  };
}

/** BIGINT (ids, epoch-ms times, counts) as a JavaScript number: every value leasehold stores is far below 2^53. */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * The server cancels a statement at its statement_timeout and says so; a
 * connection that gives no answer at all for this much longer is half-open
 * (a partition, a lost NAT entry), and waiting on would be forever.
 */
const STALL_MARGIN_MS = 1_000;

/** A server that does not answer a connect within this is reported as an error, not waited for forever. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Connection settings for the pool and for dedicated clients (LISTEN): the
 * schema is the search_path of every session; TCP keepalive finds a dead
 * peer under a connection that only listens.
 */
export function clientConfig(target: PostgresTarget): pg.ClientConfig {
  return {
    connectionString: target.connectionString,
    types: TYPES,
    keepAlive: true,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // node-postgres fails a query unanswered this long ('Query read timeout'): the connection is then dropped
    query_timeout: target.stalledAfterMs,
    options: target.options,
    // What pg_stat_activity shows: `application_name=` in the URL, else libpq's PGAPPNAME, else leasehold.
    application_name: process.env.PGAPPNAME ?? 'leasehold',
  };
}

export function openPool(target: PostgresTarget): pg.Pool {
  const pool = new pg.Pool(clientConfig(target));
  // A connection that breaks (a restart, a terminated backend, the network)
  // emits 'error' on its client, idle or checked out; unheard, that event
  // kills the process. The pool drops a broken idle client; a checked-out
  // one fails its query, which is where the fault is counted and retried.
  pool.on('error', ignoreBrokenConnection);
  pool.on('connect', (client) => client.on('error', ignoreBrokenConnection));
  return pool;
}

function ignoreBrokenConnection(): void {}

/** A named statement: prepared by the server once per connection, on first use. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/** Name a set of statements (`leasehold.<entity>.<operation>`), the way the SQLite driver prepares its own. */
export function nameAll<K extends string>(entity: string, sql: Record<K, string>): Record<K, Statement> {
  const named = {} as Record<K, Statement>;
  for (const key of Object.keys(sql) as K[]) named[key] = { name: `leasehold.${entity}.${key}`, text: sql[key] };
  return named;
}

export type Db = pg.Pool | pg.ClientBase;

/** Every statement parses BIGINT as a number, also on a client the application opened (`jobInsertWithin`). */
export async function rows<T>(db: Db, statement: Statement, values: unknown[] = []): Promise<T[]> {
  const result = await db.query({ name: statement.name, text: statement.text, values, types: TYPES });
  return result.rows as T[];
}

export async function first<T>(db: Db, statement: Statement, values: unknown[] = []): Promise<T | undefined> {
  return (await rows<T>(db, statement, values))[0];
}

/** How many rows a statement changed. */
export async function changes(db: Db, statement: Statement, values: unknown[] = []): Promise<number> {
  const result = await db.query({ name: statement.name, text: statement.text, values, types: TYPES });
  return result.rowCount ?? 0;
}

/** serialization_failure, deadlock_detected: the whole transaction rolled back and may run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const RETRIES = 8;
/** A broken connection before COMMIT: tried again this many times on a new one, then the caller hears of it. */
const RECONNECT_RETRIES = 4;

export function isRetryableError(error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.code !== undefined && RETRYABLE.has(error.code);
}

/** Connection faults raised by COMMIT itself: the transaction may or may not have committed. */
const commitInDoubt = new WeakSet<object>();

/**
 * A transaction that failed on a broken connection before COMMIT was sent, so
 * nothing of it committed. A stalled one is not tried again here: the caller
 * hears of it (DB_CONNECTION_STALLED) and tries at its next turn, on another
 * connection.
 */
function isLostBeforeCommit(error: unknown): boolean {
  return dbFaultOf(error) === 'connection' && !commitInDoubt.has(error as object);
}

/** Between two tries: 10 ms doubling to 1 s, with jitter. */
const TRY_AGAIN = { baseSeconds: 0.01, maxSeconds: 1, jitter: true };
/** Between two connections: 50 ms doubling (a terminated backend is replaced at once; a restart takes a moment). */
const RECONNECT = { baseSeconds: 0.05, maxSeconds: 1, jitter: true };

/**
 * One short READ COMMITTED transaction on a pooled connection, run again
 * (from the start, with a fresh `now`) when the server rolled it back for a
 * deadlock or a serialization failure, or when the connection broke before
 * COMMIT. A connection that broke during COMMIT leaves the outcome in doubt:
 * that error reaches the caller, whose fenced writes are safe to repeat
 * (a settlement finds its own earlier write, see `isOwnSettlement`).
 */
export async function inTransaction<T>(pool: pg.Pool, work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  const afterFailure = tryAgainAfter();
  for (;;) {
    try {
      return await onceInTransaction(pool, work);
    } catch (error) {
      await afterFailure(error, isLostBeforeCommit(error));
    }
  }
}

/**
 * The waits between the tries of one write: after a deadlock or a
 * serialization failure, up to RETRIES; after a connection lost before
 * anything of the write ran (`nothingRan`), up to RECONNECT_RETRIES; any
 * other failure, or one past its budget, is thrown.
 */
function tryAgainAfter(): (error: unknown, nothingRan: boolean) => Promise<void> {
  let tries = 0;
  let reconnects = 0;
  return async (error, nothingRan) => {
    tries += 1;
    if (isRetryableError(error) && tries <= RETRIES) return sleep(retryDelayMs(TRY_AGAIN, tries));
    if (!nothingRan || reconnects >= RECONNECT_RETRIES) throw error;
    reconnects += 1;
    await sleep(retryDelayMs(RECONNECT, reconnects));
  };
}

/**
 * A read whose best plan depends on its values (is this status rare?), in a
 * transaction planned with them: under a generic plan a LIMIT parameter
 * counts as a tenth of the table, and a walk of the primary key looks cheap.
 */
export async function readPlannedWithValues<T>(pool: pg.Pool, statement: Statement, values: unknown[]): Promise<T[]> {
  return readWithSettings(pool, PLAN_WITH_VALUES, statement, values);
}

/** `statement` read in a transaction of its own, with `settings` (SET LOCAL) for it alone. */
async function readWithSettings<T>(pool: pg.Pool, settings: string, statement: Statement, values: unknown[]) {
  return inTransaction(pool, async (db) => {
    await db.query(settings);
    return rows<T>(db, statement, values);
  });
}

const PLAN_WITH_VALUES = 'SET LOCAL plan_cache_mode = force_custom_plan';
const NO_PARALLEL = 'SET LOCAL max_parallel_workers_per_gather = 0';
/**
 * A read through an index alone: a table scan and a bitmap are priced out
 * (index scans stay allowed: turning them off turns off index-only scans
 * too). A count of a range of jobs_class_status: the planner otherwise
 * takes a table scan where the statistics say the range is the whole table.
 * The in-flight jobs: a plain index scan marks the dead entries it meets
 * (a drained burst leaves one per job until a vacuum) and later reads skip
 * them, where a bitmap scan visits each one's row again at every read.
 */
export const IN_INDEX = 'SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off';

/** `statement` read with IN_INDEX. */
export async function readInIndex<T>(pool: pg.Pool, statement: Statement, values: unknown[]): Promise<T[]> {
  return readWithSettings(pool, IN_INDEX, statement, values);
}

/**
 * Reads of a window's rows (a few thousand) that must agree with each
 * other, in one snapshot (REPEATABLE READ, read only), planned with their
 * values and without parallel workers: on a big table the planner hands a
 * window's rows to workers, whose start costs more than reading a few
 * thousand rows in one process.
 */
export async function readInOneSnapshot<T>(pool: pg.Pool, work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, async (db) => {
    await db.query(`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; ${PLAN_WITH_VALUES}; ${NO_PARALLEL}`);
    return work(db);
  });
}

/**
 * One statement on its own: no BEGIN and COMMIT round trips (a single
 * statement is its own transaction). Run again, from the start with a fresh
 * `now`, when the server rolled it back for a deadlock or a serialization
 * failure, or when no connection could be had or the one given could not
 * send it, so nothing of it ran. A connection that broke once the statement
 * was sent leaves its outcome in doubt: that error reaches the caller, as a
 * COMMIT's does in `inTransaction`.
 */
export async function inOneStatement<T>(pool: pg.Pool, work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  const afterFailure = tryAgainAfter();
  for (;;) {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      await afterFailure(error, isConnectionLost(error));
      continue;
    }
    let broken: Error | undefined;
    try {
      return await work(client);
    } catch (error) {
      if (isConnectionLost(error)) broken = error as Error;
      await afterFailure(error, isNeverSent(error));
    } finally {
      client.release(broken);
    }
  }
}

/** node-postgres refused to send on a client already broken: the server never saw the statement. */
function isNeverSent(error: unknown): boolean {
  return (
    error instanceof Error && !('code' in error) && NOT_QUERYABLE.some((message) => error.message.startsWith(message))
  );
}

const NOT_QUERYABLE = [
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];

async function onceInTransaction<T>(pool: pg.Pool, work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT').catch((error: unknown) => {
      if (isConnectionLost(error)) commitInDoubt.add(error as object);
      throw error;
    });
    return result;
  } catch (error) {
    // A stalled connection would stall the ROLLBACK too; one that cannot roll back is not given back to the pool.
    if (dbFaultOf(error) === 'stalled') broken = error as Error;
    else await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    client.release(broken);
  }
}
