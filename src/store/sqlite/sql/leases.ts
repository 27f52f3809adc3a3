import { prepareAll, type SqliteDb } from '../connection.js';
import { JOB_COLUMNS } from './jobs.js';
import { CLAIM_MAX_RETRIES, IN_FLIGHT } from '../../migration.js';

/** What decides an outcome (HeldFacts in ../../facts.ts). */
const HELD_FACTS = `id, class, status, attempts, releases, max_retries, cancel_requested_at, owner_id, lease_token, claimed_at, lease_expires_at`;
/** A take-back's facts: the held ones, and what its attempt's span is ended with (the trace it belongs to). */
const RECOVERY_FACTS = `${HELD_FACTS}, traceparent`;
const CLAIMED_COLUMNS = `id, class, payload, priority, run_at, attempts, max_retries, lease_token, lease_expires_at, created_at,
  traceparent`;

/**
 * Claim: one UPDATE ... RETURNING over the best queued rows. Every row gets
 * its own random lease token from SQLite itself, so a batch claim needs no
 * second statement. The inner SELECT walks jobs_claim in order: no sort.
 * A paused class claims nothing: `notPaused` looks up its control row by key
 * (with one class, once per statement: the subquery does not depend on the row).
 * A job whose enqueue set no max_retries gets the claimer's class value (CLAIM_MAX_RETRIES).
 * `LIMIT +@limit`, not `LIMIT @limit`: SQLite plans a bare parameter's LIMIT
 * with its bound value, and then prepares the statement again whenever the
 * parameter is bound, which is every claim: a compile as costly as the rest of the claim.
 */
function claimSql(classFilter: string, notPaused: string): string {
  return `UPDATE jobs SET status = 'CLAIMED', owner_id = @ownerId, lease_token = lower(hex(randomblob(16))),
      claimed_at = @now, started_at = NULL, heartbeat_at = @now, lease_expires_at = @leaseExpiresAt,
      finished_at = NULL, progress = NULL, attempts = attempts + 1, max_retries = ${CLAIM_MAX_RETRIES('@classMaxRetries')}
    WHERE id IN (SELECT id FROM jobs WHERE ${claimable(classFilter, notPaused)} ORDER BY priority DESC, run_at, id LIMIT +@limit)
    RETURNING ${CLAIMED_COLUMNS}`;
}

/** The rows a claim may take: queued, due, of its classes, and not paused. */
function claimable(classFilter: string, notPaused: string): string {
  return `status = 'QUEUED' AND ${classFilter} AND run_at <= @now
    AND NOT EXISTS (SELECT 1 FROM class_controls AS c WHERE c.class = ${notPaused} AND c.paused_at IS NOT NULL)`;
}

/** Statements a worker runs about jobs it holds; each fenced write matches (id, lease_token, status). */
export const LEASE_SQL = {
  /** (class, ownerId, now, leaseExpiresAt, limit, classMaxRetries) -> the claimed rows; none: nothing due, or the class is paused. */
  claimOneClass: claimSql('class = @class', '@class'),
  /** (classes as a JSON array, ...) the same for several classes; this one sorts its candidates. */
  claimManyClasses: claimSql('class IN (SELECT value FROM json_each(@classes))', 'jobs.class'),
  /** (class, now) -> a row when a claim would take something: read without the write lock before an empty-handed claim takes it. */
  dueOneClass: `SELECT 1 AS due FROM jobs WHERE ${claimable('class = @class', '@class')} LIMIT 1`,
  /** (classes as a JSON array, now) -> the same for several classes. */
  dueManyClasses: `SELECT 1 AS due FROM jobs WHERE ${claimable('class IN (SELECT value FROM json_each(@classes))', 'jobs.class')} LIMIT 1`,
  /** (id, leaseToken, startedAt, now, leaseExpiresAt) CLAIMED -> RUNNING; no row: lease lost. */
  start: `UPDATE jobs SET status = 'RUNNING', started_at = @startedAt, heartbeat_at = @now, lease_expires_at = @leaseExpiresAt
    WHERE id = @id AND lease_token = @leaseToken AND status = 'CLAIMED' RETURNING id, attempts, owner_id, claimed_at`,
  /** (id, leaseToken, now, leaseExpiresAt) heartbeat; no row: lease lost, or run out (its holder has given it up). */
  extend: `UPDATE jobs SET heartbeat_at = @now, lease_expires_at = @leaseExpiresAt
    WHERE id = @id AND lease_token = @leaseToken AND ${IN_FLIGHT} AND lease_expires_at > @now RETURNING lease_expires_at, cancel_requested_at`,
  /** (id, leaseToken, progress) no row: lease lost. */
  progress: `UPDATE jobs SET progress = @progress
    WHERE id = @id AND lease_token = @leaseToken AND ${IN_FLIGHT}`,
  /**
   * (id, leaseToken) -> what decides an outcome; no row: lease lost. The
   * outcome statements below run after it in the same transaction, so they
   * repeat the fence only as a guard.
   */
  heldFacts: `SELECT ${HELD_FACTS} FROM jobs
    WHERE id = @id AND lease_token = @leaseToken AND ${IN_FLIGHT}`,
  /** (id, leaseToken, result, startedAt, now) the one terminal write of a success. */
  complete: `UPDATE jobs SET status = 'SUCCEEDED', result = @result, finished_at = @now, lease_expires_at = NULL,
      started_at = coalesce(started_at, @startedAt), error_code = NULL, error_detail = NULL
    WHERE id = @id AND lease_token = @leaseToken AND ${IN_FLIGHT}`,
  /**
   * (result, now, startedAt, id, leaseToken, heldAs CLAIMED|RUNNING, now), in that order, a success written
   * without reading its row: fenced on the status its holder knows it left the row in and on the lease not run
   * out (liveFacts). No row: the holder's knowledge is not the row's, and the general way (heldFacts) decides.
   * Bound by position, as attemptFinish (./history.ts): the two statements of every success.
   */
  completeHeld: `UPDATE jobs SET status = 'SUCCEEDED', result = ?, finished_at = ?, lease_expires_at = NULL,
      started_at = coalesce(started_at, ?), error_code = NULL, error_detail = NULL
    WHERE id = ? AND lease_token = ? AND status = ? AND lease_expires_at > ?`,
  /** (id, leaseToken, runAt, code, detail, startedAt) back to the queue for another try. */
  requeue: `UPDATE jobs SET status = 'QUEUED', run_at = @runAt, lease_expires_at = NULL,
      started_at = coalesce(started_at, @startedAt), error_code = @code, error_detail = @detail
    WHERE id = @id AND lease_token = @leaseToken AND ${IN_FLIGHT}`,
  /** (id, leaseToken, status FAILED|CANCELLED, code, detail, startedAt, now) terminal. */
  finishBadly: `UPDATE jobs SET status = @status, finished_at = @now, lease_expires_at = NULL,
      started_at = coalesce(started_at, @startedAt), error_code = @code, error_detail = @detail
    WHERE id = @id AND lease_token = @leaseToken AND ${IN_FLIGHT}`,
  /** (id, leaseToken, startedAt, now) back to the queue without spending a retry, in the place it had (it was due). */
  release: `UPDATE jobs SET status = 'QUEUED', run_at = min(run_at, @now), lease_expires_at = NULL, releases = releases + 1,
      started_at = coalesce(started_at, @startedAt)
    WHERE id = @id AND lease_token = @leaseToken AND ${IN_FLIGHT}`,
  /** (now, limit) held jobs whose lease ran out, oldest first, through jobs_lease_expiry. */
  expired: `SELECT ${RECOVERY_FACTS}
    FROM jobs WHERE ${IN_FLIGHT} AND lease_expires_at < @now ORDER BY lease_expires_at LIMIT @limit`,
  /** (ownerId) full rows of the jobs an owner holds, through jobs_owner. */
  heldRowsByOwner: `SELECT ${JOB_COLUMNS} FROM jobs WHERE ${IN_FLIGHT} AND owner_id = @ownerId`,
  /** (ownerId) the jobs an owner holds, through jobs_owner. */
  heldByOwner: `SELECT ${RECOVERY_FACTS}
    FROM jobs WHERE ${IN_FLIGHT} AND owner_id = @ownerId`,
};

export const prepareLeaseStatements = (db: SqliteDb) => prepareAll(db, LEASE_SQL);

export type LeaseStatements = ReturnType<typeof prepareLeaseStatements>;
