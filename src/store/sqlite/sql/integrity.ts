import { prepareAll, type SqliteDb } from '../connection.js';

/** Whole-database checks, for the chaos program and operators: each returns problems, none when healthy. */
export const INTEGRITY_SQL = {
  /** () -> one row 'ok', or one row per corruption found. */
  pages: `SELECT integrity_check AS problem FROM pragma_integrity_check()`,
  /** () -> rows whose parent is missing. */
  foreignKeys: `SELECT "table" AS child, rowid, parent FROM pragma_foreign_key_check()`,
  /** () -> jobs whose attempt rows are not numbered 1..attempts. */
  attemptGaps: `SELECT j.id, j.attempts, count(a.attempt) AS rows, coalesce(max(a.attempt), 0) AS highest
    FROM jobs AS j LEFT JOIN job_attempts AS a ON a.job_id = j.id
    GROUP BY j.id HAVING count(a.attempt) <> j.attempts OR coalesce(max(a.attempt), 0) <> j.attempts`,
};

export const prepareIntegrityStatements = (db: SqliteDb) => prepareAll(db, INTEGRITY_SQL);
