/**
 * Shipped migrations never change: each step's SQL, as each driver renders
 * it on a database migrated step by step from empty, hashes to what
 * src/store/shipped-migrations.json recorded when it shipped. A change to a
 * function goes into a new step (docs/reference/migrations.md).
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { execMigration, SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { ROOT } from '../helpers/sources.js';

type Driver = 'postgres' | 'sqlite';
const MANIFEST = 'src/store/shipped-migrations.json';
const shipped = JSON.parse(readFileSync(path.join(ROOT, MANIFEST), 'utf8')) as Record<Driver, Record<string, string>>;

const sha256 = (sql: string) => createHash('sha256').update(sql).digest('hex');

/** Each step's SQL by version, as a fresh database runs it. */
function rendered(driver: Driver): Record<string, string> {
  if (driver === 'postgres') return Object.fromEntries(POSTGRES_MIGRATIONS.map((m) => [m.version, m.sql]));
  const db = new Database(':memory:');
  try {
    db.pragma('foreign_keys = OFF');
    return Object.fromEntries(
      SQLITE_MIGRATIONS.map((migration) => {
        const sql = execMigration(migration, db);
        return [migration.version, sql];
      }),
    );
  } finally {
    db.close();
  }
}

describe.each(['postgres', 'sqlite'] as const)('shipped %s migrations', (driver) => {
  it('each step hashes to what it shipped as, and every step is in the manifest', () => {
    const steps = rendered(driver);
    const hashes = Object.fromEntries(Object.entries(steps).map(([version, sql]) => [version, sha256(sql)]));
    for (const [version, hash] of Object.entries(shipped[driver])) {
      expect(hashes[version], `${driver} step ${version} changed after it shipped: add a new step instead`).toBe(hash);
    }
    expect(hashes, `a new ${driver} step: add its hash to ${MANIFEST}`).toEqual(shipped[driver]);
  });
});
