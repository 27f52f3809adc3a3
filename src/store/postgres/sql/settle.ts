import { nameAll } from '../connection.js';
import { IN_FLIGHT } from '../../migration.js';
import { CLAIMED_COLUMNS, claimCtes, STARTED_DETAIL, type ClaimParams } from './leases.js';

/** JSON text built as the store's eventDetail (JSON.stringify) writes it: same keys, order and spacing. */
const ATTEMPT_DETAIL = `'{"attempt":' || d.attempts || '}'`;

/**
 * A batch of successes, each with its cost, written as one statement: the
 * common case of a worker's group commit, where the general path (lock and
 * read the facts, plan in the store, write, record: a round trip each, in a
 * transaction) took six round trips. Parameters: parallel arrays (ids,
 * leaseTokens, startedAts, results, cpuMs, peakRssBytes), then now.
 *
 * `held` locks the rows these tokens name, in id order (as every writer of
 * several held rows locks them: no deadlock with a heartbeat, a sweep or a
 * supervisor's take-back); a row another transaction changed meanwhile is
 * re-checked after the lock. Of those, the ones still held (in flight) and
 * whose lease has not run out by `now` (liveFacts) are written. Both tests
 * are made there, not in the pick, which goes by primary key alone: offered
 * `status IN (...)` or `lease_expires_at > now`, the planner read
 * jobs_owner or jobs_lease_expiry whole, and between vacuums those hold an
 * entry for every claim of the last lease_seconds. They are written with the same
 * statements' effects as planSettlement's plan for a success: the job
 * SUCCEEDED (fenced again), its attempt ended with its cost, and its
 * timeline: the claim trail of a job whose start was not written yet
 * (STARTED carrying the claim, or CLAIMED alone), then SUCCEEDED, in batch
 * order. `done` is every settlement written; one missing from it was not
 * held, and the store looks at it as the general path does.
 */
const SETTLE_CTES = `batch AS (
      SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::float8[], $6::bigint[]) WITH ORDINALITY
        AS b(id, lease_token, started_at, result, cpu_ms, peak_rss_bytes, n)),
    held AS MATERIALIZED (
      SELECT id, lease_token, status, attempts, owner_id, claimed_at, lease_expires_at FROM jobs
      WHERE id = ANY($1::bigint[]) AND lease_token = ANY($2::text[])
      ORDER BY id FOR NO KEY UPDATE),
    done AS (
      UPDATE jobs AS j SET status = 'SUCCEEDED', result = b.result, finished_at = $7, error_code = NULL, error_detail = NULL,
        lease_expires_at = NULL, started_at = coalesce(j.started_at, b.started_at)
      FROM held AS h JOIN batch AS b USING (id, lease_token)
      WHERE j.id = h.id AND j.lease_token = h.lease_token AND h.${IN_FLIGHT} AND h.lease_expires_at > $7
      RETURNING j.id, j.lease_token, h.status, h.attempts, h.owner_id, h.claimed_at, b.started_at, b.cpu_ms, b.peak_rss_bytes, b.n),
    attempts_ended AS (
      UPDATE job_attempts AS a SET status = 'SUCCEEDED', finished_at = $7, error_code = NULL, error_detail = NULL,
        cpu_ms = d.cpu_ms, peak_rss_bytes = d.peak_rss_bytes
      FROM done AS d
      WHERE a.job_id = d.id AND a.attempt = d.attempts AND a.lease_token = d.lease_token AND a.status = 'RUNNING'),
    events AS (
      INSERT INTO job_events (job_id, ts, event, actor, detail)
      SELECT d.id, e.ts, e.event, e.actor, e.detail FROM done AS d
        CROSS JOIN LATERAL (VALUES
          (1, d.status = 'CLAIMED' AND d.started_at IS NOT NULL, d.started_at, 'STARTED', 'worker', ${STARTED_DETAIL}),
          (1, d.status = 'CLAIMED' AND d.started_at IS NULL, coalesce(d.claimed_at, 0), 'CLAIMED', coalesce(d.owner_id, 'unknown'), ${ATTEMPT_DETAIL}),
          (2, true, $7, 'SUCCEEDED', 'worker', ${ATTEMPT_DETAIL})) AS e(k, due, ts, event, actor, detail)
      WHERE e.due
      ORDER BY d.n, e.k)`;

/** The claim's values after the settlement's seven. */
const CLAIM_AFTER_SETTLE: ClaimParams = { classes: '$8', owner: '$9', now: '$7', expires: '$10', limit: '$11', classMaxRetries: '$12' };

/**
 * The batch's answer, one row per settlement written (`settled`) and per job
 * claimed (CLAIMED_COLUMNS), in one result.
 */
const settledRows = (claimColumns: boolean) =>
  `SELECT true AS settled, id, ${claimColumns ? 'NULL AS class, NULL AS payload, NULL::int AS priority, NULL::bigint AS run_at, NULL::int AS attempts, NULL::bigint AS max_retries, ' : ''}lease_token${
    claimColumns ? ', NULL::bigint AS lease_expires_at, NULL::bigint AS created_at' : ''
  } FROM done`;

const settleAndClaim = (manyClasses: boolean) => `WITH ${SETTLE_CTES},
    ${claimCtes(CLAIM_AFTER_SETTLE, manyClasses)}
    SELECT false AS settled, ${CLAIMED_COLUMNS} FROM claimed
    UNION ALL ${settledRows(true)}`;

/** A worker's group commit of successes, with or without its next claim, in one statement each. */
export const SETTLE_SQL = nameAll('settle', {
  /** (ids[], leaseTokens[], startedAts[], results[], cpuMs[], peakRssBytes[], now) -> a row (settled, id, lease_token) per success written. */
  successes: `WITH ${SETTLE_CTES}
    ${settledRows(false)}`,
  /** (the same, then class, ownerId, leaseExpiresAt, limit, classMaxRetries) -> also the claimed rows (settled false), their attempts written. */
  successesThenClaimOneClass: settleAndClaim(false),
  /** (the same, with classes[]) several classes. */
  successesThenClaimManyClasses: settleAndClaim(true),
});
