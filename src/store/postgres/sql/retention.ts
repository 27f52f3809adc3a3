import { NEEDED_BY_WAITING } from '../../migration.js';
import { nameAll } from '../connection.js';

/**
 * Retention: terminal jobs past their age, through jobs_finished, but for a parent a WAITING job still
 * depends on (its status and result are what that job waits on). Attempts and events go by ON DELETE CASCADE.
 */
export const RETENTION_SQL = nameAll('retention', {
  /** (status, before) -> how many jobs of that terminal status finished before then: what a prune would delete. */
  countOlder: `SELECT count(*) AS count FROM jobs WHERE status = $1 AND finished_at < $2 AND NOT ${NEEDED_BY_WAITING}`,
  /**
   * (status, before, limit) deletes up to limit of them, oldest first; the row count is the jobs (not the
   * cascaded rows). Fewer than limit: none are left. The pick is locked and re-checked, so a job retried
   * meanwhile stays, and two pruners at once skip each other's rows.
   */
  deleteOlderBatch: `DELETE FROM jobs WHERE id IN (
      SELECT id FROM jobs WHERE status = $1 AND finished_at < $2 AND NOT ${NEEDED_BY_WAITING} ORDER BY finished_at LIMIT $3 FOR UPDATE SKIP LOCKED)`,
});
