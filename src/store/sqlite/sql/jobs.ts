import { prepareAll, type SqliteDb } from '../connection.js';
import type { MultiRowInsert } from '../multi-row.js';
import { IN_FLIGHT } from '../../migration.js';
import { JOB_STATUSES } from '../../types.js';

/**
 * A job's runs: its claims but for those handed back without spending a retry (runsOf in ../../policy.ts, the
 * same rule in TypeScript). Bare column names: for a statement on jobs alone.
 */
export const RUNS = `attempts - releases`;

export const JOB_COLUMNS = `id, class, status, priority, payload, result, created_at, run_at, claimed_at, started_at,
  heartbeat_at, lease_expires_at, finished_at, owner_id, lease_token, attempts, max_retries, max_retries_from_class, releases,
  cancel_requested_at, error_code, error_detail, idempotency_key, progress, pending_parents, on_parent_failure, key_scope,
  key_expires_at`;

/** The job columns, each prefixed with a table alias. */
const columnsOf = (alias: string) =>
  JOB_COLUMNS.split(',')
    .map((column) => `${alias}.${column.trim()}`)
    .join(', ');

/** A recursive CTE `classes(class)`: every class present, in order, by one index seek each (NULL ends it). */
export const CLASSES_PRESENT = `classes(class) AS (
      SELECT (SELECT class FROM jobs ORDER BY class LIMIT 1)
      UNION ALL
      SELECT (SELECT class FROM jobs WHERE class > classes.class ORDER BY class LIMIT 1) FROM classes WHERE class IS NOT NULL)`;

/** A condition on jobs' columns, each named with `alias` ('' or 'j.'). */
type JobFilter = (alias: string) => string;
const statusIs: JobFilter = (alias) => `${alias}status = @status`;
/** The FAILED jobs of an error code (jobs_failed). */
const failedWithCode: JobFilter = (alias) => `${alias}status = 'FAILED' AND ${alias}error_code = @errorCode`;

/**
 * The newest `limit` jobs below @beforeId that match `filter`, by a loose
 * scan: for every class present, one seek for its floor (the id of its
 * limit-th newest match) in `index` (led by class, ending in id), then its
 * matches from the floor up; the sort is over those few rows per class only.
 * The index is named: with both bounds on id the planner would rather walk
 * the primary key between them, which holds every class's rows.
 */
const newestOfEachClass = (filter: JobFilter, index: string) => `WITH RECURSIVE ${CLASSES_PRESENT},
    floors(class, floor) AS (
      SELECT class, coalesce((SELECT id FROM jobs WHERE class = classes.class AND ${filter('')} AND id < @beforeId
        ORDER BY id DESC LIMIT 1 OFFSET @limit - 1), 0)
      FROM classes WHERE class IS NOT NULL)
    SELECT ${columnsOf('j')} FROM floors CROSS JOIN jobs AS j INDEXED BY ${index}
    WHERE j.class = floors.class AND ${filter('j.')} AND j.id >= floors.floor AND j.id < @beforeId
    ORDER BY j.id DESC LIMIT @limit`;

/** A FAILED job runs once more, now, with one more run granted if its retries are spent. */
const RETRY = `status = 'QUEUED', run_at = @now, finished_at = NULL, max_retries = max(max_retries, ${RUNS})`;
const CANCEL = `status = 'CANCELLED', finished_at = @now, cancel_requested_at = @now, pending_parents = 0`;

/**
 * One batch of a bulk action: `set` on at most @limit jobs that match
 * `filter` with ids up to @throughId (found through the index the filter
 * leads), checked again as they change; returns their ids.
 */
const bulkBatch = (set: string, filter: JobFilter) =>
  `UPDATE jobs SET ${set} WHERE id IN (SELECT id FROM jobs WHERE ${filter('')} AND id <= @throughId LIMIT @limit) AND ${filter('')} RETURNING id`;
/** The same over a filter without a class: through an index led by class, one range per class present. */
const bulkBatchOfEachClass = (
  set: string,
  filter: JobFilter,
) => `UPDATE jobs SET ${set} WHERE id IN (WITH RECURSIVE ${CLASSES_PRESENT}
    SELECT j.id FROM classes CROSS JOIN jobs AS j WHERE j.class = classes.class AND ${filter('j.')} AND j.id <= @throughId LIMIT @limit) AND ${filter('')} RETURNING id`;
const failed: JobFilter = (alias) => `${alias}status = 'FAILED'`;
const queued: JobFilter = (alias) => `${alias}status = 'QUEUED'`;
const ofClass =
  (filter: JobFilter): JobFilter =>
  (alias) =>
    `${alias}class = @class AND ${filter(alias)}`;

/** Producer and operator statements on `jobs`; the lists are newest first, below @beforeId (keyset pagination). */
export const JOB_SQL = {
  /**
   * (class, status, payload, priority, runAt, maxRetries, maxRetriesFromClass 0|1, key, keyScope, keyExpiresAt,
   * onParentFailure, pendingParents, now, finishedAt, code, detail, traceparent) -> the new id.
   */
  insert: `INSERT INTO jobs (class, status, priority, payload, created_at, run_at, max_retries, max_retries_from_class, idempotency_key,
      key_scope, key_expires_at, on_parent_failure, pending_parents, finished_at, error_code, error_detail, traceparent)
    VALUES (@class, @status, @priority, @payload, @now, @runAt, @maxRetries, @maxRetriesFromClass, @idempotencyKey,
      @keyScope, @keyExpiresAt, @onParentFailure, @pendingParents, @finishedAt, @code, @detail, @traceparent) RETURNING id`,
  /** (class, key) -> the job already enqueued under that idempotency key, if any. */
  findByKey: `SELECT id FROM jobs WHERE class = ? AND idempotency_key = ?`,
  /** (id) -> the row or nothing. */
  get: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ?`,
  /** (beforeId, limit) by the primary key. */
  listAll: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id < @beforeId ORDER BY id DESC LIMIT @limit`,
  /** (status, beforeId, limit) each class's newest through jobs_class_status (a loose scan of it finds the classes). */
  listByStatus: newestOfEachClass(statusIs, 'jobs_class_status'),
  /** (class, beforeId, limit) the same through jobs_class_status, one seek per status (named, as above). */
  listByClass: `WITH statuses(status) AS (VALUES ${JOB_STATUSES.map((status) => `('${status}')`).join(', ')}),
    floors(status, floor) AS (
      SELECT status, coalesce((SELECT id FROM jobs WHERE class = @class AND status = statuses.status AND id < @beforeId
        ORDER BY id DESC LIMIT 1 OFFSET @limit - 1), 0)
      FROM statuses)
    SELECT ${columnsOf('j')} FROM floors CROSS JOIN jobs AS j INDEXED BY jobs_class_status
    WHERE j.class = @class AND j.status = floors.status AND j.id >= floors.floor AND j.id < @beforeId
    ORDER BY j.id DESC LIMIT @limit`,
  /** (class, status, beforeId, limit) through jobs_class_status (named, as above). */
  listByClassStatus: `SELECT ${JOB_COLUMNS} FROM jobs INDEXED BY jobs_class_status WHERE class = @class AND status = @status AND id < @beforeId ORDER BY id DESC LIMIT @limit`,
  /** (errorCode, beforeId, limit) each class's newest through jobs_failed. */
  listFailedByCode: newestOfEachClass(failedWithCode, 'jobs_failed'),
  /** (class, errorCode, beforeId, limit) through jobs_failed (named, as above). */
  listFailedByClassCode: `SELECT ${JOB_COLUMNS} FROM jobs INDEXED BY jobs_failed WHERE class = @class AND ${failedWithCode('')} AND id < @beforeId ORDER BY id DESC LIMIT @limit`,
  /** (key) -> the jobs holding that idempotency key, newest first: one seek in jobs_idempotency per class present. */
  listByKey: `WITH RECURSIVE ${CLASSES_PRESENT}
    SELECT ${columnsOf('j')} FROM classes CROSS JOIN jobs AS j WHERE j.class = classes.class AND j.idempotency_key = @key ORDER BY j.id DESC`,
  /** (class, key) -> the job holding that idempotency key in that class, through jobs_idempotency. */
  listByClassKey: `SELECT ${JOB_COLUMNS} FROM jobs WHERE class = @class AND idempotency_key = @key`,
  /** () -> FAILED jobs, counted in jobs_failed. */
  countFailed: `SELECT count(*) AS count FROM jobs WHERE status = 'FAILED'`,
  /** (class) -> a class's FAILED jobs, in jobs_failed. */
  countFailedOfClass: `SELECT count(*) AS count FROM jobs WHERE class = @class AND status = 'FAILED'`,
  /** (errorCode) -> FAILED jobs of an error code: one range of jobs_failed per class present. */
  countFailedWithCode: `WITH RECURSIVE ${CLASSES_PRESENT}
    SELECT count(*) AS count FROM classes CROSS JOIN jobs AS j WHERE j.class = classes.class AND ${failedWithCode('j.')}`,
  /** (class, errorCode) -> one range of jobs_failed. */
  countFailedOfClassWithCode: `SELECT count(*) AS count FROM jobs WHERE class = @class AND ${failedWithCode('')}`,
  /** (id, now) a queued job is cancelled at once; no row changed: it was not queued. */
  cancelQueued: `UPDATE jobs SET ${CANCEL} WHERE id = @id AND status IN ('QUEUED', 'WAITING')`,
  /** (id, now) a held job is marked; its worker learns it on the next heartbeat. No row changed: not held, or already marked. */
  requestCancel: `UPDATE jobs SET cancel_requested_at = @now
    WHERE id = @id AND ${IN_FLIGHT} AND cancel_requested_at IS NULL`,
  /** (id, now) a FAILED job runs once more, now; no row changed: it was not FAILED. */
  retryFailed: `UPDATE jobs SET ${RETRY} WHERE id = @id AND status = 'FAILED'`,
  /** (now, throughId, limit) a batch of FAILED jobs runs once more, through jobs_failed (FAILED jobs only); returns their ids. */
  retryAllFailed: bulkBatch(RETRY, failed),
  /** (class, now, throughId, limit) a batch of a class's, through jobs_class_status. */
  retryClassFailed: bulkBatch(RETRY, ofClass(failed)),
  /** (errorCode, now, throughId, limit) a batch of an error code's, through jobs_failed. */
  retryCodeFailed: bulkBatchOfEachClass(RETRY, failedWithCode),
  /** (class, errorCode, now, throughId, limit) a batch of a class's of an error code, through jobs_failed. */
  retryClassCodeFailed: bulkBatch(RETRY, ofClass(failedWithCode)),
  /** (now, throughId, limit) a batch of QUEUED jobs is cancelled, a range of jobs_class_status per class; returns their ids. */
  cancelAllQueued: bulkBatchOfEachClass(CANCEL, queued),
  /** (class, now, throughId, limit) a batch of a class's, through jobs_class_status. */
  cancelClassQueued: bulkBatch(CANCEL, ofClass(queued)),
  /** (id) -> 1 when the job exists. */
  exists: `SELECT 1 AS found FROM jobs WHERE id = ?`,
};

/**
 * (id, class, priority, payload, now, runAt, maxRetries, maxRetriesFromClass 0|1, keyScope, onParentFailure,
 * traceparent) per row: jobs with no key and no parents, QUEUED, many a statement, each with its id given
 * (inserts.ts).
 */
export const PLAIN_JOB_INSERT = {
  head: `INSERT INTO jobs (id, class, status, priority, payload, created_at, run_at, max_retries, max_retries_from_class,
      key_scope, on_parent_failure, traceparent) VALUES`,
  row: `(?, ?, 'QUEUED', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
} satisfies MultiRowInsert;

export const prepareJobStatements = (db: SqliteDb) => prepareAll(db, JOB_SQL);

export type JobStatements = ReturnType<typeof prepareJobStatements>;
