/**
 * Which errors are database faults, and how a run of them becomes one outage
 * (one DB_UNAVAILABLE, one DB_RECOVERED) however many operations fail.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../src/errors.js';
import { DbAvailability, dbFaultOf, describeOutage, watchAvailability, type DbOutage } from '../../src/store/faults.js';

function sqliteError(code: string): Error {
  return new Database.SqliteError('database or disk is full', code);
}

function pgError(code: string): Error {
  const error = new pg.DatabaseError('terminating connection due to administrator command', 0, 'error');
  error.code = code;
  return error;
}

describe('dbFaultOf', () => {
  it('tells faults of the database from answers about the operation', () => {
    expect(dbFaultOf(pgError('57P01'))).toBe('connection');
    expect(dbFaultOf(pgError('53100'))).toBe('disk_full');
    expect(dbFaultOf(new Error('Connection terminated unexpectedly'))).toBe('connection');
    expect(dbFaultOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(
      'connection',
    );
    expect(dbFaultOf(sqliteError('SQLITE_FULL'))).toBe('disk_full');
    expect(dbFaultOf(sqliteError('SQLITE_BUSY'))).toBe('locked');
    expect(dbFaultOf(sqliteError('SQLITE_IOERR_WRITE'))).toBe('io');

    expect(dbFaultOf(pgError('23505'))).toBeUndefined();
    expect(dbFaultOf(sqliteError('SQLITE_CONSTRAINT_UNIQUE'))).toBeUndefined();
    expect(dbFaultOf(new LeaseLostError(1, 'f'.repeat(32), 'complete'))).toBeUndefined();
    expect(dbFaultOf('Connection terminated')).toBeUndefined();
  });
});

describe('DbAvailability through watchAvailability', () => {
  function watched() {
    const heard: string[] = [];
    const availability = new DbAvailability({
      unavailable: (outage: DbOutage) => heard.push(`unavailable ${outage.kind}: ${describeOutage(outage)}`),
      recovered: (outage: DbOutage) => heard.push(`recovered ${outage.kind}`),
      failed: (kind) => heard.push(`failed ${kind}`),
    });
    let fault: Error | undefined;
    const store = watchAvailability(
      {
        async jobGet() {
          return 1;
        },
        async jobsSettle() {
          if (fault !== undefined) throw fault;
          return 2;
        },
      },
      availability,
    );
    return { store, availability, heard, fail: (error: Error | undefined) => (fault = error) };
  }

  it('reports one outage however many operations fail, and its end at the first success', async () => {
    const { store, availability, heard, fail } = watched();
    fail(pgError('57P01'));
    for (let i = 0; i < 3; i++) await expect(store.jobsSettle()).rejects.toThrow('administrator command');
    expect(availability.outage?.kind).toBe('connection');
    await expect(store.jobGet()).resolves.toBe(1);
    expect(availability.outage).toBeUndefined();
    expect(heard).toEqual([
      'failed connection',
      'unavailable connection: the database is unreachable (terminating connection due to administrator command)',
      'failed connection',
      'failed connection',
      'recovered connection',
    ]);
  });

  it('ends a full disk only when an operation that failed in it succeeds: reads (and writes that change nothing) work all along', async () => {
    const { store, availability, heard, fail } = watched();
    fail(sqliteError('SQLITE_FULL'));
    await expect(store.jobsSettle()).rejects.toThrow('disk is full');
    await store.jobGet();
    expect(availability.outage?.kind).toBe('disk_full');
    fail(undefined);
    await expect(store.jobsSettle()).resolves.toBe(2);
    expect(availability.outage).toBeUndefined();
    expect(heard.filter((line) => !line.startsWith('failed'))).toEqual([
      'unavailable disk_full: the database is out of disk space (database or disk is full)',
      'recovered disk_full',
    ]);
  });

  it('counts a fenced write turned away as an answer, not a fault', async () => {
    const { store, availability, heard, fail } = watched();
    fail(new LeaseLostError(1, 'f'.repeat(32), 'complete'));
    await expect(store.jobsSettle()).rejects.toBeInstanceOf(LeaseLostError);
    expect(availability.outage).toBeUndefined();
    expect(heard).toEqual([]);
  });
});
