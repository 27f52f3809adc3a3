import { nameAll } from '../connection.js';
import { CANCELLED_BY_FLOW } from '../../flow-rules.js';
import { PARENT_LOCK } from './insert-function.js';

/** What a retry of failed jobs does to the dependents their failure cancelled (../revive.ts). */
export const FLOW_SQL = nameAll('flows', {
  /**
   * (parent ids) -> their dependents a parent's end cancelled, locked in id
   * order (two retries reviving the same dependent take turns), each with the
   * lowest of those parents it has.
   */
  cancelledDependents: `SELECT c.id, c.on_parent_failure,
      (SELECT min(d.parent_id) FROM job_dependencies AS d WHERE d.job_id = c.id AND d.parent_id = ANY($1::bigint[])) AS parent
    FROM jobs AS c
    WHERE c.id IN (SELECT d.job_id FROM job_dependencies AS d WHERE d.parent_id = ANY($1::bigint[]))
      AND c.status = 'CANCELLED' AND c.error_code IN ${CANCELLED_BY_FLOW}
    ORDER BY c.id FOR NO KEY UPDATE OF c`,
  /**
   * (dependent ids) each of their parents' lock, shared, as a dependent's
   * enqueue takes it: a parent that ends meanwhile either committed before
   * the parents are read, or waits and then counts the revived dependent down.
   */
  lockParentsShared: `SELECT pg_advisory_xact_lock_shared(${PARENT_LOCK('p')})
    FROM (SELECT DISTINCT parent_id AS p FROM job_dependencies WHERE job_id = ANY($1::bigint[])) AS parents ORDER BY p`,
  /** (dependent ids) -> their parents' statuses. */
  parentsOf: `SELECT d.job_id, j.id, j.status FROM job_dependencies AS d JOIN jobs AS j ON j.id = d.parent_id
    WHERE d.job_id = ANY($1::bigint[]) ORDER BY d.job_id, j.id`,
  /** (ids, pending counts) -> each dependent WAITING again for its pending parents. */
  revive: `UPDATE jobs AS j SET status = 'WAITING', pending_parents = r.pending, finished_at = NULL, error_code = NULL,
      error_detail = NULL
    FROM unnest($1::bigint[], $2::int[]) AS r(id, pending)
    WHERE j.id = r.id AND j.status = 'CANCELLED' RETURNING j.id`,
});
