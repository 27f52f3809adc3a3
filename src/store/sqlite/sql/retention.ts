import { NEEDED_BY_WAITING } from '../../migration.js';
import { prepareAll, type SqliteDb } from '../connection.js';

/**
 * Retention: terminal jobs past their age, through jobs_finished, but for a parent a WAITING job still
 * depends on (its status and result are what that job waits on). Attempts and events go by ON DELETE CASCADE.
 */
export const RETENTION_SQL = {
  /** (status, before) -> how many jobs of that terminal status finished before then: what a prune would delete. */
  countOlder: `SELECT count(*) AS count FROM jobs WHERE status = @status AND finished_at < @before AND NOT ${NEEDED_BY_WAITING}`,
  /**
   * (status, before, limit) deletes up to limit of them, oldest first; changes
   * counts the jobs (not the cascaded rows). Fewer than limit: none are left.
   * The status is checked in the same statement, so a job retried meanwhile stays.
   */
  deleteOlderBatch: `DELETE FROM jobs WHERE id IN (
      SELECT id FROM jobs WHERE status = @status AND finished_at < @before AND NOT ${NEEDED_BY_WAITING} ORDER BY finished_at LIMIT @limit)`,
};

export const prepareRetentionStatements = (db: SqliteDb) => prepareAll(db, RETENTION_SQL);

export type RetentionStatements = ReturnType<typeof prepareRetentionStatements>;
