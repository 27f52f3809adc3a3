/**
 * successes: the fenced write of a batch of successes that outcomes.ts
 * planned, with the next claim when one is asked for, in one statement.
 *
 * Parameters, one array element per success: $1 ids, $2 lease tokens,
 * $3 lazy starts, $4 results, $5-$7 the attempts' end (status, code,
 * detail), $8 CPU ms, $9 peak RSS; $10 now; $11 the timeline rows, in
 * order, as a JSON array of {job_id, ts, event, actor, detail, trail}
 * (trail: owed only while the row's start is unwritten).
 *
 * Writes only rows still held by that token, in flight, whose lease has not
 * run out by now; their attempts and timeline rows with them. Nothing is
 * decided here: the rows' contents come planned, and the row's status only
 * tells whether the claim trail is still owed.
 *
 * The jobs' dependents move in the same statement (leasehold_after_outcomes).
 *
 * Returns a row (settled true, id, lease_token) per success written; with a
 * claim, also the claimed rows (settled false). A success missing from the
 * answer was not held, and the store looks into it the general way.
 */
import { nameAll } from '../connection.js';
import { IN_FLIGHT } from '../../migration.js';
import { afterOutcomes, CLAIMED_COLUMNS, claimCtes, type ClaimParams } from './leases.js';

// The pick goes by primary key alone; the fence is tested on the locked rows (why: docs/concepts/store-statements.md).
// A held row finds its values by its place in the arrays, not by a join: under a generic plan, which guesses one
// held row, the join unnested the nine arrays again for every row (64 rows: 4,096 read, most of the statement).
const SETTLE_CTES = `held AS MATERIALIZED (
      SELECT id, lease_token, status, attempts, lease_expires_at, array_position($1::bigint[], id) AS n FROM jobs
      WHERE id = ANY($1::bigint[]) AND lease_token = ANY($2::text[])
      ORDER BY id FOR NO KEY UPDATE),
    done AS (
      UPDATE jobs AS j SET status = 'SUCCEEDED', result = ($4::text[])[h.n], finished_at = $10, error_code = NULL, error_detail = NULL,
        lease_expires_at = NULL, started_at = coalesce(j.started_at, ($3::bigint[])[h.n])
      FROM held AS h
      WHERE j.id = h.id AND j.lease_token = h.lease_token AND h.lease_token = ($2::text[])[h.n]
        AND h.${IN_FLIGHT} AND h.lease_expires_at > $10
      RETURNING j.id, j.lease_token, h.status, h.attempts, h.n),
    attempts_ended AS (
      UPDATE job_attempts AS a SET status = ($5::text[])[d.n], finished_at = $10, error_code = ($6::text[])[d.n],
        error_detail = ($7::text[])[d.n], cpu_ms = ($8::float8[])[d.n], peak_rss_bytes = ($9::bigint[])[d.n]
      FROM done AS d
      WHERE a.job_id = d.id AND a.attempt = d.attempts AND a.lease_token = d.lease_token AND a.status = 'RUNNING'),
    events AS (
      INSERT INTO job_events (job_id, ts, event, actor, detail)
      SELECT e.job_id, e.ts, e.event, e.actor, e.detail
      FROM ROWS FROM (json_to_recordset($11::json) AS (job_id bigint, ts bigint, event text, actor text, detail text, trail boolean))
        WITH ORDINALITY AS e(job_id, ts, event, actor, detail, trail, n)
      JOIN done AS d ON d.id = e.job_id
      WHERE NOT e.trail OR d.status = 'CLAIMED'
      ORDER BY e.n),
    ${afterOutcomes(`SELECT array_agg(id) AS ids, array_agg('SUCCEEDED'::text) AS statuses FROM done`, '$10')}`;

/** The claim's values after the settlement's eleven. */
const CLAIM_AFTER_SETTLE: ClaimParams = {
  classes: '$12',
  owner: '$13',
  now: '$10',
  expires: '$14',
  limit: '$15',
  classMaxRetries: '$16',
};

const settledRows = (claimColumns: boolean) =>
  `SELECT true AS settled, id, ${claimColumns ? 'NULL AS class, NULL AS payload, NULL::int AS priority, NULL::bigint AS run_at, NULL::int AS attempts, NULL::bigint AS max_retries, ' : ''}lease_token${
    claimColumns ? ', NULL::bigint AS lease_expires_at, NULL::bigint AS created_at, NULL::text AS traceparent' : ''
  } FROM done CROSS JOIN after`;

const settleAndClaim = (manyClasses: boolean) => `WITH ${SETTLE_CTES},
    ${claimCtes(CLAIM_AFTER_SETTLE, manyClasses)}
    SELECT false AS settled, ${CLAIMED_COLUMNS} FROM claimed
    UNION ALL ${settledRows(true)}`;

export const SETTLE_SQL = nameAll('settle', {
  /** (the eleven above) -> a row (settled, id, lease_token) per success written. */
  successes: `WITH ${SETTLE_CTES}
    ${settledRows(false)}`,
  /** (the same, then class, ownerId, leaseExpiresAt, limit, classMaxRetries) -> also the claimed rows (settled false), their attempts written. */
  successesThenClaimOneClass: settleAndClaim(false),
  /** (the same, with classes[]) several classes. */
  successesThenClaimManyClasses: settleAndClaim(true),
});
