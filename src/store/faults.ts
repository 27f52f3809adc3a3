/**
 * Guarantee 10 (Database faults are weather, not death): which errors mean
 * "the database is away" rather than "this operation is wrong", and one
 * tracker per process that turns a run of them into an outage with a start
 * and an end.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { retryDelayMs } from '../backoff.js';

/** What kind of fault: the label of `leasehold_db_errors_total` and of the DB_UNAVAILABLE log line. */
export const DB_FAULT_KINDS = ['connection', 'stalled', 'locked', 'disk_full', 'io'] as const;
export type DbFaultKind = (typeof DB_FAULT_KINDS)[number];

/** PostgreSQL SQLSTATEs of a server going away, refusing sessions, or out of room. */
const PG_CONNECTION_STATES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '08007',
]);
const PG_DISK_FULL_STATES = new Set(['53100']);
/** Socket errors under a client (Node's codes). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/**
 * node-postgres reports a connection that ended, or one it could not get in
 * time, as a plain Error with no code: its message is all there is to go by.
 */
const PG_CLIENT_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];

/** node-postgres's query_timeout: no answer at all came on the connection in time. */
const PG_NO_ANSWER = 'Query read timeout';

/** The fault an error shows, or undefined when the database answered (the operation itself failed). */
export function dbFaultOf(error: unknown): DbFaultKind | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'locked';
    if (code === 'SQLITE_FULL') return 'disk_full';
    if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CANTOPEN') return 'io';
    if (PG_CONNECTION_STATES.has(code) || SOCKET_CODES.has(code)) return 'connection';
    if (PG_DISK_FULL_STATES.has(code)) return 'disk_full';
  }
  if (PG_CLIENT_MESSAGES.some((message) => error.message.startsWith(message))) return 'connection';
  if (error.message === PG_NO_ANSWER) return 'stalled';
  return undefined;
}

/** A connection that broke or stopped answering: drop it, and what ran on it before COMMIT did not commit. */
export function isConnectionLost(error: unknown): boolean {
  const kind = dbFaultOf(error);
  return kind === 'connection' || kind === 'stalled';
}

/** The server cancelled a statement that ran past statement_timeout (SQLSTATE 57014, with this reason). */
export function isStatementTimeout(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error as { code?: unknown }).code === '57014' &&
    error.message.includes('statement timeout')
  );
}

/** An error handler for work that is tried again later: a database fault is left to the outage's own log lines. */
export function unlessDbFault(report: (error: unknown) => void): (error: unknown) => void {
  return (error) => {
    if (dbFaultOf(error) === undefined) report(error);
  };
}

/** The outage in progress. */
export interface DbOutage {
  kind: DbFaultKind;
  since: number;
  /** The first error's message. */
  reason: string;
}

const KIND_WORDS: Record<DbFaultKind, string> = {
  connection: 'unreachable',
  stalled: 'not answering on a connection, which is replaced',
  locked: 'locked by another connection',
  disk_full: 'out of disk space',
  io: 'failing to read or write its files',
};

/** What an operator reads: "the database is out of disk space (database or disk is full)". */
export function describeOutage(outage: DbOutage): string {
  return `the database is ${KIND_WORDS[outage.kind]} (${outage.reason})`;
}

export interface DbAvailabilityListener {
  /** A statement ran past statement_timeout and the server cancelled it: log DB_STATEMENT_TIMEOUT. */
  timedOut?(operation: string, reason: string): void;
  /** The first fault after a healthy stretch: log DB_UNAVAILABLE once. */
  unavailable(outage: DbOutage): void;
  /** The first success after an outage: log DB_RECOVERED with its duration. */
  recovered(outage: DbOutage, outageMs: number): void;
  /** Every faulted operation, for `leasehold_db_errors_total`. */
  failed(kind: DbFaultKind): void;
}

/**
 * Write-side faults (a held write lock, a full disk) leave reads working, and
 * a write that changes nothing commits without the disk: only an operation
 * that failed in the outage, succeeding, ends one.
 */
const WRITE_SIDE: ReadonlySet<DbFaultKind> = new Set(['locked', 'disk_full']);

/** One process's view of the database: up, or in an outage since a time. */
export class DbAvailability {
  private current: DbOutage | undefined;
  /** The operations that failed in the outage in progress. */
  private readonly failing = new Set<string>();

  constructor(private readonly listener: DbAvailabilityListener) {}

  get outage(): DbOutage | undefined {
    return this.current;
  }

  /** `operation` failed; true when the error was a database fault (the caller need not log it again). */
  failed(operation: string, error: unknown): boolean {
    if (isStatementTimeout(error)) this.listener.timedOut?.(operation, (error as Error).message);
    const kind = dbFaultOf(error);
    if (kind === undefined) return false;
    this.listener.failed(kind);
    this.failing.add(operation);
    if (this.current === undefined) {
      this.current = { kind, since: Date.now(), reason: (error as Error).message.split('\n')[0] ?? '' };
      this.listener.unavailable(this.current);
    }
    return true;
  }

  /** `operation` got its answer from the database. */
  succeeded(operation: string): void {
    const outage = this.current;
    if (outage === undefined || (WRITE_SIDE.has(outage.kind) && !this.failing.has(operation))) return;
    this.current = undefined;
    this.failing.clear();
    this.listener.recovered(outage, Date.now() - outage.since);
  }
}

/** The two lines an outage writes to the log, whichever process saw it. */
export function outageLog(
  log: (level: 'warn' | 'info', msg: string, fields: Record<string, unknown>) => void,
): Pick<DbAvailabilityListener, 'unavailable' | 'recovered' | 'timedOut'> {
  return {
    unavailable: (outage) =>
      log('warn', `${describeOutage(outage)}: retrying with backoff`, {
        event: outage.kind === 'stalled' ? 'DB_CONNECTION_STALLED' : 'DB_UNAVAILABLE',
        kind: outage.kind,
      }),
    timedOut: (operation, reason) =>
      log('warn', `${operation}: ${reason}; tried again at its next turn`, {
        event: 'DB_STATEMENT_TIMEOUT',
        operation,
      }),
    recovered: (outage, outageMs) =>
      log('info', `database recovered after ${(outageMs / 1000).toFixed(1)}s`, {
        event: 'DB_RECOVERED',
        kind: outage.kind,
        outage_ms: outageMs,
      }),
  };
}

/**
 * The same store, with every operation's fate told to `availability`. The
 * errors still reach the caller, which retries at its own pace (the next
 * heartbeat, the next flush, the next sweep).
 */
export function watchAvailability<S extends object>(store: S, availability: DbAvailability): S {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (
        typeof value !== 'function' ||
        typeof property !== 'string' ||
        property === 'close' ||
        property === 'subscribe'
      )
        return value;
      return async (...args: unknown[]) => {
        try {
          const result: unknown = await (value as (...a: unknown[]) => unknown).apply(target, args);
          availability.succeeded(property);
          return result;
        } catch (error) {
          // A fenced write turned away, or bad input: the database answered.
          if (!availability.failed(property, error)) availability.succeeded(property);
          throw error;
        }
      };
    },
  });
}

/** Between two tries of a start-up step while the database is away: 0.1 s doubling to 5 s. */
const WHILE_AWAY = { baseSeconds: 0.1, maxSeconds: 5, jitter: true };

/**
 * Run `step` until it succeeds or fails for a reason other than the database
 * being away (each fault told to `availability`, when given): what a process
 * cannot start without (its store, its first writes) waits out an outage
 * instead of ending the process.
 */
export async function retryWhileAway<T>(step: () => Promise<T>, availability?: DbAvailability): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      const done = await step();
      availability?.succeeded('open');
      return done;
    } catch (error) {
      if (dbFaultOf(error) === undefined) throw error;
      availability?.failed('open', error);
      await sleep(retryDelayMs(WHILE_AWAY, tries));
    }
  }
}
