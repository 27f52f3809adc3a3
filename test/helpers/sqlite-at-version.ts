/** A SQLite file as an older build left it: the shipped steps up to a version, run as that build ran them. */
import Database from 'better-sqlite3';
import { execMigration, SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';

/** `path` migrated through `version`, open for the test to add rows (foreign keys on). */
export function sqliteMigratedThrough(path: string, version: number): Database.Database {
  const db = new Database(path);
  db.exec(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
  );
  // A step that rebuilds a table runs with the foreign keys off, as the migration runner runs it.
  db.pragma('foreign_keys = OFF');
  for (const migration of SQLITE_MIGRATIONS.filter((m) => m.version <= version)) {
    execMigration(migration, db);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, 0)').run(migration.version, migration.name);
  }
  db.pragma('foreign_keys = ON');
  return db;
}
