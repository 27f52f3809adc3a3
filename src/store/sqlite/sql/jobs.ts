import { prepareAll, type SqliteDb } from '../connection.js';
import { IN_FLIGHT } from '../../migration.js';
import { JOB_STATUSES } from '../../types.js';

export const JOB_COLUMNS = `id, class, status, priority, payload, result, created_at, run_at, claimed_at, started_at,
  heartbeat_at, lease_expires_at, finished_at, owner_id, lease_token, attempts, max_retries, releases,
  cancel_requested_at, error_code, error_detail, idempotency_key, progress`;

/** The job columns, each prefixed with a table alias. */
const columnsOf = (alias: string) => JOB_COLUMNS.split(',').map((column) => `${alias}.${column.trim()}`).join(', ');

/** A recursive CTE `classes(class)`: every class present, in order, by one index seek each (NULL ends it). */
const CLASSES_PRESENT = `classes(class) AS (
      SELECT (SELECT class FROM jobs ORDER BY class LIMIT 1)
      UNION ALL
      SELECT (SELECT class FROM jobs WHERE class > classes.class ORDER BY class LIMIT 1) FROM classes WHERE class IS NOT NULL)`;

/** Producer and operator statements on `jobs`. */
export const JOB_SQL = {
  /** (class, payload, priority, runAt, maxRetries, key, now) -> the new id. */
  insert: `INSERT INTO jobs (class, status, priority, payload, created_at, run_at, max_retries, idempotency_key)
    VALUES (@class, 'QUEUED', @priority, @payload, @now, @runAt, @maxRetries, @idempotencyKey) RETURNING id`,
  /** (class, key) -> the job already enqueued under that idempotency key, if any. */
  findByKey: `SELECT id FROM jobs WHERE class = ? AND idempotency_key = ?`,
  /** (id) -> the row or nothing. */
  get: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ?`,
  /** (limit) newest first. */
  listAll: `SELECT ${JOB_COLUMNS} FROM jobs ORDER BY id DESC LIMIT @limit`,
  /**
   * (status, limit) newest first. Every class present (a loose scan of
   * jobs_class_status: one seek each) gives its own newest `limit`, found from
   * the id of its limit-th newest; the sort is over those few rows only.
   */
  listByStatus: `WITH RECURSIVE ${CLASSES_PRESENT},
    floors(class, floor) AS (
      SELECT class, coalesce((SELECT id FROM jobs WHERE class = classes.class AND status = @status ORDER BY id DESC LIMIT 1 OFFSET @limit - 1), 0)
      FROM classes WHERE class IS NOT NULL)
    SELECT ${columnsOf('j')} FROM floors CROSS JOIN jobs AS j
    WHERE j.class = floors.class AND j.status = @status AND j.id >= floors.floor
    ORDER BY j.id DESC LIMIT @limit`,
  /** (class, limit) newest first: the same through jobs_class_status, one seek per status. */
  listByClass: `WITH statuses(status) AS (VALUES ${JOB_STATUSES.map((status) => `('${status}')`).join(', ')}),
    floors(status, floor) AS (
      SELECT status, coalesce((SELECT id FROM jobs WHERE class = @class AND status = statuses.status ORDER BY id DESC LIMIT 1 OFFSET @limit - 1), 0)
      FROM statuses)
    SELECT ${columnsOf('j')} FROM floors CROSS JOIN jobs AS j
    WHERE j.class = @class AND j.status = floors.status AND j.id >= floors.floor
    ORDER BY j.id DESC LIMIT @limit`,
  /** (class, status, limit) newest first, through jobs_class_status. */
  listByClassStatus: `SELECT ${JOB_COLUMNS} FROM jobs WHERE class = @class AND status = @status ORDER BY id DESC LIMIT @limit`,
  /** (id, now) a queued job is cancelled at once; no row changed: it was not queued. */
  cancelQueued: `UPDATE jobs SET status = 'CANCELLED', finished_at = @now, cancel_requested_at = @now
    WHERE id = @id AND status = 'QUEUED'`,
  /** (id, now) a held job is marked; its worker learns it on the next heartbeat. No row changed: not held, or already marked. */
  requestCancel: `UPDATE jobs SET cancel_requested_at = @now
    WHERE id = @id AND ${IN_FLIGHT} AND cancel_requested_at IS NULL`,
  /** (id, now) a FAILED job runs once more, now; no row changed: it was not FAILED. */
  retryFailed: `UPDATE jobs SET status = 'QUEUED', run_at = @now, finished_at = NULL,
    max_retries = max(max_retries, attempts - releases)
    WHERE id = @id AND status = 'FAILED'`,
  /** (now) every FAILED job runs once more; returns their ids. */
  retryAllFailed: `UPDATE jobs SET status = 'QUEUED', run_at = @now, finished_at = NULL,
    max_retries = max(max_retries, attempts - releases)
    WHERE status = 'FAILED' RETURNING id`,
  /** (class, now) every FAILED job of a class runs once more; returns their ids. */
  retryClassFailed: `UPDATE jobs SET status = 'QUEUED', run_at = @now, finished_at = NULL,
    max_retries = max(max_retries, attempts - releases)
    WHERE status = 'FAILED' AND class = @class RETURNING id`,
  /** (id) attempts and events go with it (ON DELETE CASCADE). */
  /** (id) -> 1 when the job exists. */
  exists: `SELECT 1 AS found FROM jobs WHERE id = ?`,
};

export const prepareJobStatements = (db: SqliteDb) => prepareAll(db, JOB_SQL);

export type JobStatements = ReturnType<typeof prepareJobStatements>;
