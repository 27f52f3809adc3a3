import pg from 'pg';
import { nameAll, type Statement } from '../connection.js';
import { IN_FLIGHT } from '../../migration.js';
import { JOB_STATUSES } from '../../types.js';

/**
 * A job's runs: its claims but for those handed back without spending a retry (runsOf in ../../policy.ts, the
 * same rule in TypeScript). Bare column names: for a statement on jobs alone.
 */
export const RUNS = `attempts - releases`;

/** Every enqueue's writes in one call (sql/enqueue-function.ts), in `schema` when given (a client whose search_path is not the queue's). */
function insertAnnouncedText(schema: string): string {
  return `SELECT out_id, out_created, out_sqlstate, out_message FROM ${schema}leasehold_insert_jobs_guarded($1::bigint,
    $2::text, $3::text, $4::text[], $5::int[], $6::text[], $7::bigint[], $8::bigint[], $9::int[], $10::text[], $11::text[],
    $12::text[], $13::bigint[], $14::text[], $15::int[], $16::bigint[], $17::int[], $18::text[])`;
}

const insertsIn = new Map<string, Statement>();

/** The enqueue statement naming the queue's schema: one prepared statement per schema on a connection. */
export function insertAnnouncedIn(schema: string): Statement {
  let statement = insertsIn.get(schema);
  if (statement === undefined) {
    statement = {
      name: `leasehold.jobs.insertAnnounced@${schema}`,
      text: insertAnnouncedText(`${pg.escapeIdentifier(schema)}.`),
    };
    insertsIn.set(schema, statement);
  }
  return statement;
}

export const JOB_COLUMNS = `id, class, status, priority, payload, result, created_at, run_at, claimed_at, started_at,
  heartbeat_at, lease_expires_at, finished_at, owner_id, lease_token, attempts, max_retries, max_retries_from_class, releases,
  cancel_requested_at, error_code, error_detail, idempotency_key, progress, pending_parents, on_parent_failure, key_scope,
  key_expires_at`;

const RETRY = `status = 'QUEUED', run_at = $1, finished_at = NULL, max_retries = greatest(max_retries, ${RUNS})`;
const CANCEL = `status = 'CANCELLED', finished_at = $1, cancel_requested_at = $1, pending_parents = 0`;

/**
 * One batch of a bulk action: `set` (now: $1) on at most `limit` jobs that
 * match `filter` with ids up to `throughId`, checked again as they change
 * (a row another writer changed meanwhile may match no more); returns them.
 * Newest first: without an order, when most rows match, the planner scans
 * the table for the first `limit` instead of walking an index down.
 */
const bulkBatch = (set: string, filter: string, throughId: string, limit: string) =>
  `UPDATE jobs SET ${set} WHERE id = ANY(ARRAY(SELECT id FROM jobs WHERE ${filter} AND id <= ${throughId} ORDER BY id DESC LIMIT ${limit})) AND ${filter} RETURNING id, class`;
/** The same over a filter without a class: through an index led by class, a LATERAL range per class present. */
const bulkBatchOfEachClass = (
  set: string,
  filter: string,
  throughId: string,
  limit: string,
) => `UPDATE jobs SET ${set} WHERE id = ANY(ARRAY(WITH RECURSIVE ${CLASSES_PRESENT}
    SELECT batch.id FROM (SELECT class FROM classes WHERE class IS NOT NULL) AS present CROSS JOIN LATERAL (
      SELECT id FROM jobs WHERE class = present.class AND ${filter} AND id <= ${throughId} ORDER BY id DESC LIMIT ${limit}) AS batch LIMIT ${limit})) AND ${filter} RETURNING id, class`;

/**
 * A recursive CTE `classes(class)`: every class present, last first, by one seek each in jobs_class_status
 * (NULL ends it). Backwards: a seek lands on its class's last entries, its newest ended jobs, where forwards it
 * lands on its CLAIMED and QUEUED ones, after a burst the dead entries of every job's earlier versions, walked one by
 * one until a vacuum removes them.
 */
export const CLASSES_PRESENT = `classes(class) AS (
      (SELECT class FROM jobs ORDER BY class DESC LIMIT 1)
      UNION ALL
      SELECT (SELECT j.class FROM jobs AS j WHERE j.class < c.class ORDER BY j.class DESC LIMIT 1) FROM classes AS c WHERE c.class IS NOT NULL)`;

/**
 * The newest jobs below `beforeId` that match `filter`, `limit` at most: every
 * class present gives its newest matches through an index led by class (a
 * LATERAL seek each); the sort is over those few rows only.
 */
const newestOfEachClass = (filter: string, limit: string, beforeId: string) => `WITH RECURSIVE ${CLASSES_PRESENT}
    SELECT newest.* FROM (SELECT class FROM classes WHERE class IS NOT NULL) AS present CROSS JOIN LATERAL (
      SELECT ${JOB_COLUMNS} FROM jobs WHERE class = present.class AND ${filter} AND id < ${beforeId} ORDER BY id DESC LIMIT ${limit}) AS newest
    ORDER BY newest.id DESC LIMIT ${limit}`;

/** Producer and operator statements on `jobs`. */
export const JOB_SQL = nameAll('jobs', {
  /**
   * (now, actor, event, classes[], priorities[], payloads[], runAts[], maxRetries[], fromClass[], keys[], details[],
   * keyScopes[], keyExpiries[], onParentFailure[], edge: dependents[], parentIds[], parentPositions[]) -> leasehold_insert_jobs_guarded's rows.
   */
  insertAnnounced: insertAnnouncedText(''),
  /** (id) -> the row or nothing. */
  get: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`,
  /** (id) -> the job's parents, through the primary key of job_dependencies. */
  parentsOf: `SELECT j.id, j.class, j.status, j.result, j.error_code FROM job_dependencies AS d JOIN jobs AS j ON j.id = d.parent_id
    WHERE d.job_id = $1 ORDER BY d.parent_id`,
  /** (id, limit) -> the job's children, through job_dependencies_parent. */
  childrenOf: `SELECT j.id, j.class, j.status, j.result, j.error_code FROM job_dependencies AS d JOIN jobs AS j ON j.id = d.job_id
    WHERE d.parent_id = $1 ORDER BY d.job_id LIMIT $2`,
  /** (id) -> how many jobs wait or waited for it: one range of job_dependencies_parent. */
  countChildren: `SELECT count(*) AS count FROM job_dependencies WHERE parent_id = $1`,
  /** (limit, beforeId) newest first, below beforeId (every list pages by id: keyset), by the primary key. */
  listAll: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id < $2 ORDER BY id DESC LIMIT $1`,
  /** (status, limit, beforeId) each class's newest through jobs_class_status (a loose scan of it finds the classes). */
  listByStatus: newestOfEachClass('status = $1', '$2', '$3'),
  /**
   * (class, limit, beforeId) the same through jobs_class_status, one arm
   * per status, each written out so the planner knows which status is rare.
   */
  listByClass: `SELECT * FROM (${JOB_STATUSES.map(
    (status) =>
      `(SELECT ${JOB_COLUMNS} FROM jobs WHERE class = $1 AND status = '${status}' AND id < $3 ORDER BY id DESC LIMIT $2)`,
  ).join(' UNION ALL ')}) AS newest
    ORDER BY id DESC LIMIT $2`,
  /** (class, status, limit, beforeId) through jobs_class_status. */
  listByClassStatus: `SELECT ${JOB_COLUMNS} FROM jobs WHERE class = $1 AND status = $2 AND id < $4 ORDER BY id DESC LIMIT $3`,
  /** (errorCode, limit, beforeId) FAILED jobs of an error code: each class's newest through jobs_failed. */
  listFailedByCode: newestOfEachClass(`status = 'FAILED' AND error_code = $1`, '$2', '$3'),
  /** (class, errorCode, limit, beforeId) through jobs_failed. */
  listFailedByClassCode: `SELECT ${JOB_COLUMNS} FROM jobs WHERE class = $1 AND status = 'FAILED' AND error_code = $2 AND id < $4 ORDER BY id DESC LIMIT $3`,
  /** (key) -> the jobs holding that idempotency key, newest first: one seek in jobs_idempotency per class present. */
  listByKey: `WITH RECURSIVE ${CLASSES_PRESENT}
    SELECT keyed.* FROM (SELECT class FROM classes WHERE class IS NOT NULL) AS present CROSS JOIN LATERAL (
      SELECT ${JOB_COLUMNS} FROM jobs WHERE class = present.class AND idempotency_key = $1) AS keyed
    ORDER BY keyed.id DESC`,
  /** (class, key) -> the job holding that idempotency key in that class, through jobs_idempotency. */
  listByClassKey: `SELECT ${JOB_COLUMNS} FROM jobs WHERE class = $1 AND idempotency_key = $2`,
  /** () -> FAILED jobs, counted in jobs_failed. */
  countFailed: `SELECT count(*) AS count FROM jobs WHERE status = 'FAILED'`,
  /** (class) -> a class's FAILED jobs, in jobs_failed. */
  countFailedOfClass: `SELECT count(*) AS count FROM jobs WHERE class = $1 AND status = 'FAILED'`,
  /** (errorCode) -> FAILED jobs of an error code: one range of jobs_failed per class present. */
  countFailedWithCode: `WITH RECURSIVE ${CLASSES_PRESENT}
    SELECT coalesce(sum(failed.count), 0)::bigint AS count FROM (SELECT class FROM classes WHERE class IS NOT NULL) AS present CROSS JOIN LATERAL (
      SELECT count(*) AS count FROM jobs WHERE class = present.class AND status = 'FAILED' AND error_code = $1) AS failed`,
  /** (class, errorCode) -> one range of jobs_failed. */
  countFailedOfClassWithCode: `SELECT count(*) AS count FROM jobs WHERE class = $1 AND status = 'FAILED' AND error_code = $2`,
  /** (id) -> status and owner, the row locked until commit (a cancel decides on facts nobody changes meanwhile). */
  lockForCancel: `SELECT status, owner_id FROM jobs WHERE id = $1 FOR NO KEY UPDATE`,
  /** (id, now) a queued or waiting job is cancelled at once; no row changed: it was neither. */
  cancelQueued: `UPDATE jobs SET status = 'CANCELLED', finished_at = $2, cancel_requested_at = $2, pending_parents = 0 WHERE id = $1 AND status IN ('QUEUED', 'WAITING')`,
  /** (ids[], statuses[], now, actor) the dependents of jobs that ended outside an outcome plan (sql/dependents-function.ts). */
  afterOutcomes: `SELECT leasehold_after_outcomes($1::bigint[], $2::text[], $3::bigint, $4::text) AS touched`,
  /** (id, now) a held job is marked; its worker learns it on the next heartbeat. No row changed: not held, or already marked. */
  requestCancel: `UPDATE jobs SET cancel_requested_at = $2
    WHERE id = $1 AND ${IN_FLIGHT} AND cancel_requested_at IS NULL`,
  /** (now, id) a FAILED job runs once more, now; no row changed: it was not FAILED. */
  retryFailed: `UPDATE jobs SET ${RETRY} WHERE id = $2 AND status = 'FAILED' RETURNING id, class`,
  /** (now, throughId, limit) a batch of FAILED jobs runs once more, a range of an index per class; returns their ids and classes. */
  retryAllFailed: bulkBatchOfEachClass(RETRY, `status = 'FAILED'`, '$2', '$3'),
  /** (now, class, throughId, limit) a batch of a class's. */
  retryClassFailed: bulkBatch(RETRY, `class = $2 AND status = 'FAILED'`, '$3', '$4'),
  /** (now, errorCode, throughId, limit) a batch of an error code's, through jobs_failed. */
  retryCodeFailed: bulkBatchOfEachClass(RETRY, `status = 'FAILED' AND error_code = $2`, '$3', '$4'),
  /** (now, class, errorCode, throughId, limit) a batch of a class's of an error code, through jobs_failed. */
  retryClassCodeFailed: bulkBatch(RETRY, `class = $2 AND status = 'FAILED' AND error_code = $3`, '$4', '$5'),
  /** (now, throughId, limit) a batch of QUEUED jobs is cancelled, a range of jobs_class_status per class; returns their ids and classes. */
  cancelAllQueued: bulkBatchOfEachClass(CANCEL, `status = 'QUEUED'`, '$2', '$3'),
  /** (now, class, throughId, limit) a batch of a class's. */
  cancelClassQueued: bulkBatch(CANCEL, `class = $2 AND status = 'QUEUED'`, '$3', '$4'),
  /** (id) attempts and events go with it (ON DELETE CASCADE). */
  /** (id) -> a row when the job exists. */
  exists: `SELECT 1 AS found FROM jobs WHERE id = $1`,
});
