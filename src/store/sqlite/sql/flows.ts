import { CANCELLED_BY_FLOW } from '../../flow-rules.js';
import { prepareAll, type SqliteDb } from '../connection.js';

const ENDED = `('SUCCEEDED', 'FAILED', 'CANCELLED')`;

/** Flows and keys: the statements flows.ts (the driver's side of ../../flow-rules.ts) runs. */
export const FLOW_SQL = {
  /** (id) -> the job's parents, through the primary key. */
  parentsOf: `SELECT j.id, j.class, j.status, j.result, j.error_code FROM job_dependencies AS d JOIN jobs AS j ON j.id = d.parent_id
    WHERE d.job_id = ? ORDER BY d.parent_id`,
  /** (id, limit) -> the job's children, through job_dependencies_parent. */
  childrenOf: `SELECT j.id, j.class, j.status, j.result, j.error_code FROM job_dependencies AS d JOIN jobs AS j ON j.id = d.job_id
    WHERE d.parent_id = ? ORDER BY d.job_id LIMIT ?`,
  /** (id) -> how many jobs wait or waited for it: one range of the covering job_dependencies_parent. */
  countChildren: `SELECT count(*) AS count FROM job_dependencies WHERE parent_id = ?`,
  /** (ids as a JSON array) -> the parents that exist, with their status, by id. */
  parents: `SELECT id, status FROM jobs WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`,
  /** (jobId, parentId) one edge. */
  insertEdge: `INSERT INTO job_dependencies (job_id, parent_id) VALUES (?, ?)`,
  /** (parentId) -> its WAITING dependents, through job_dependencies_parent. */
  waitingDependents: `SELECT c.id, c.on_parent_failure FROM job_dependencies AS d JOIN jobs AS c ON c.id = d.job_id
    WHERE d.parent_id = ? AND c.status = 'WAITING' ORDER BY d.job_id`,
  /** (id, now, code, detail) a WAITING dependent cancelled. */
  cancelDependent: `UPDATE jobs SET status = 'CANCELLED', finished_at = @now, pending_parents = 0, error_code = @code,
    error_detail = @detail WHERE id = @id AND status = 'WAITING'`,
  /** (parentId) -> its dependents a parent's end cancelled, through job_dependencies_parent. */
  cancelledDependents: `SELECT c.id, c.on_parent_failure FROM job_dependencies AS d JOIN jobs AS c ON c.id = d.job_id
    WHERE d.parent_id = ? AND c.status = 'CANCELLED' AND c.error_code IN ${CANCELLED_BY_FLOW} ORDER BY d.job_id`,
  /** (id, pending) a dependent a parent's end cancelled, WAITING again for `pending` parents. */
  reviveDependent: `UPDATE jobs SET status = 'WAITING', pending_parents = @pending, finished_at = NULL, error_code = NULL,
    error_detail = NULL WHERE id = @id AND status = 'CANCELLED'`,
  /** (id, now) -> the dependent's status after one of its parents ended: QUEUED once none is left. */
  countDown: `UPDATE jobs SET pending_parents = pending_parents - 1,
      status = CASE WHEN pending_parents <= 1 THEN 'QUEUED' ELSE 'WAITING' END,
      run_at = CASE WHEN pending_parents <= 1 THEN max(run_at, @now) ELSE run_at END
    WHERE id = @id AND status = 'WAITING' RETURNING status`,
  /** (class, key, now) the job holding a key gives it up when it is free again (ended, for scope incomplete; or expired). */
  freeKey: `UPDATE jobs SET idempotency_key = NULL WHERE class = @class AND idempotency_key = @key
    AND ((key_scope = 'incomplete' AND status IN ${ENDED}) OR key_expires_at <= @now)`,
};

export const prepareFlowStatements = (db: SqliteDb) => prepareAll(db, FLOW_SQL);

export type FlowStatements = ReturnType<typeof prepareFlowStatements>;
