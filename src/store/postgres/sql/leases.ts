import { FLOW_ACTOR } from '../../timeline.js';
import { nameAll } from '../connection.js';
import { JOB_COLUMNS } from './jobs.js';
import { CLAIM_MAX_RETRIES, IN_FLIGHT } from '../../migration.js';

const HELD_FACTS = `id, class, status, attempts, releases, max_retries, cancel_requested_at, owner_id, lease_token, claimed_at, lease_expires_at`;
/** A take-back's facts: the held ones, and what its attempt's span is ended with (the trace it belongs to). */
const RECOVERY_FACTS = `${HELD_FACTS}, traceparent`;
export const CLAIMED_COLUMNS = `id, class, payload, priority, run_at, attempts, max_retries, lease_token, lease_expires_at, created_at,
  traceparent`;
/** Where a claim's values are in a statement's parameters: classes (one, or an array), ownerId, now, leaseExpiresAt, limit, classMaxRetries. */
export interface ClaimParams {
  classes: string;
  owner: string;
  now: string;
  expires: string;
  limit: string;
  classMaxRetries: string;
}

/**
 * The other half of a fenced write made in one statement: when the CTE
 * `wrote` wrote nothing, record that the holder was turned away (its
 * detail from the caller), if the job still exists; the job's key is locked
 * FOR KEY SHARE, as eventInsertIfJob does, so a job being deleted gets no event.
 */
const zombieUnless = (wrote: string, id: string, ts: string, detail: string) => `zombie AS (
      INSERT INTO job_events (job_id, ts, event, actor, detail)
      SELECT jobs.id, ${ts}, 'ZOMBIE_WRITE_REJECTED', 'worker', ${detail} FROM jobs
      WHERE jobs.id = ${id} AND NOT EXISTS (SELECT 1 FROM ${wrote}) FOR KEY SHARE OF jobs)`;

/** The fence of every write a holder makes: (id, lease_token) still held. */
const FENCE = `id = $1 AND lease_token = $2 AND ${IN_FLIGHT}`;

/**
 * Claim: one UPDATE of a locked pick of the best due rows (by primary key,
 * why: docs/performance.md), and the attempt rows of what it claimed. SKIP
 * LOCKED: two claimers never wait on each other nor get the same row; each
 * row gets its own random token (gen_random_uuid, as 32 hex digits). A
 * paused class claims nothing; a job enqueued without max_retries gets the
 * claimer's class value. `claimed` (CLAIMED_COLUMNS) and `attempt_rows`, for
 * a statement to end with its own SELECT; `p` names the parameters.
 */
export function claimCtes(p: ClaimParams, manyClasses: boolean): string {
  const classFilter = manyClasses ? `class = ANY(${p.classes}::text[])` : `class = ${p.classes}`;
  const notPaused = manyClasses ? 'jobs.class' : p.classes;
  return `claimed AS (
      UPDATE jobs AS j SET status = 'CLAIMED', owner_id = ${p.owner}, lease_token = replace(gen_random_uuid()::text, '-', ''),
        claimed_at = ${p.now}, started_at = NULL, heartbeat_at = ${p.now}, lease_expires_at = ${p.expires},
        finished_at = NULL, progress = NULL, attempts = j.attempts + 1, max_retries = ${CLAIM_MAX_RETRIES(`${p.classMaxRetries}::bigint`)}
      WHERE j.id = ANY (ARRAY (SELECT id FROM jobs WHERE status = 'QUEUED' AND ${classFilter} AND run_at <= ${p.now}
              AND NOT EXISTS (SELECT 1 FROM class_controls AS c WHERE c.class = ${notPaused} AND c.paused_at IS NOT NULL)
            ORDER BY priority DESC, run_at, id LIMIT ${p.limit} FOR NO KEY UPDATE SKIP LOCKED))
      RETURNING ${CLAIMED_COLUMNS}),
    attempt_rows AS (
      INSERT INTO job_attempts (job_id, attempt, owner_id, lease_token, started_at, status)
      SELECT id, attempts, ${p.owner}, lease_token, ${p.now}, 'RUNNING' FROM claimed)`;
}

const CLAIM_PARAMS: ClaimParams = {
  classes: '$1',
  owner: '$2',
  now: '$3',
  expires: '$4',
  limit: '$5',
  classMaxRetries: '$6',
};
const claimSql = (manyClasses: boolean) => `WITH ${claimCtes(CLAIM_PARAMS, manyClasses)}
    SELECT * FROM claimed`;

/**
 * Row `j`'s element of an array parameter of `outcomes`: found by its place in $1, not by a join with the
 * arrays unnested, which a generic plan (guessing few rows) unnested again for every row.
 */
const ofRow = (param: string, type: string) => `(${param}::${type}[])[array_position($1::bigint[], j.id)]`;

/** `run_at`, `finished_at`, the error and `releases` of a job an outcome of its kind (requeue, finishBadly, release) writes. */
const KIND = ofRow('$12', 'text');
const OUTCOME_SET = `run_at = CASE ${KIND} WHEN 'requeue' THEN ${ofRow('$14', 'bigint')} WHEN 'release' THEN LEAST(j.run_at, $4) ELSE j.run_at END,
        finished_at = CASE ${KIND} WHEN 'finishBadly' THEN $4 ELSE j.finished_at END,
        error_code = CASE ${KIND} WHEN 'release' THEN j.error_code ELSE ${ofRow('$7', 'text')} END,
        error_detail = CASE ${KIND} WHEN 'release' THEN j.error_detail ELSE ${ofRow('$8', 'text')} END,
        releases = j.releases + CASE ${KIND} WHEN 'release' THEN 1 ELSE 0 END`;

/** Statements a worker, the sweeper and the supervisor run about held jobs; each write is fenced on (id, lease_token, status). */
/**
 * A CTE named `after`: the jobs `ended` (a query of one row: ids[], statuses[]) hand their ends to their
 * dependents (sql/dependents-function.ts). One row always: the statement joins it, so that it runs.
 */
export const afterOutcomes = (ended: string, now: string) => `after AS (
      SELECT leasehold_after_outcomes(ended.ids, ended.statuses, ${now}, '${FLOW_ACTOR}') AS touched FROM (${ended}) AS ended)`;

export const LEASE_SQL = nameAll('leases', {
  /** (class, ownerId, now, leaseExpiresAt, limit, classMaxRetries) -> the claimed rows, their attempts written; none: nothing due (or all locked by others), or the class is paused. */
  claimOneClass: claimSql(false),
  /** (classes[], ...) the same for several classes; this one sorts its candidates. */
  claimManyClasses: claimSql(true),
  /**
   * (id, leaseToken, startedAt, now, leaseExpiresAt, startedDetail, zombieDetail) CLAIMED -> RUNNING and its
   * STARTED event (carrying the claim), in one statement; no row: lease lost, and recorded as a zombie's write.
   */
  start: `WITH started AS (
      UPDATE jobs SET status = 'RUNNING', started_at = $3, heartbeat_at = $4, lease_expires_at = $5
      WHERE id = $1 AND lease_token = $2 AND status = 'CLAIMED' RETURNING id),
    event AS (
      INSERT INTO job_events (job_id, ts, event, actor, detail) SELECT id, $3, 'STARTED', 'worker', $6 FROM started),
    ${zombieUnless('started', '$1', '$4', '$7')}
    SELECT id FROM started`,
  /** (id, leaseToken) -> what the claim this token names fixed (ClaimFacts); none: the token is not the job's now. */
  claimFacts: `SELECT id, attempts, owner_id, claimed_at FROM jobs WHERE id = $1 AND lease_token = $2`,
  /**
   * (ids[], leaseTokens[], now, leaseExpiresAt, zombieDetails[]) heartbeat for several leases, in one statement:
   * the rows are locked in id order (no deadlock with a supervisor taking them back), then renewed. A lease
   * missing from the answer is lost, or ran out (its holder has given it up, by guarantee 10 (Database faults are
   * weather, not death)), and is recorded as a zombie's write (with its detail from the caller) if its job still
   * exists.
   * Tokens are random per claim, so the two ANY filters match exactly the (id, token) pairs asked for.
   */
  extendMany: `WITH renewed AS (
      UPDATE jobs SET heartbeat_at = $3, lease_expires_at = $4
      WHERE id = ANY (ARRAY (SELECT id FROM jobs WHERE id = ANY($1::bigint[]) AND lease_token = ANY($2::text[]) AND ${IN_FLIGHT}
                               AND lease_expires_at > $3
                             ORDER BY id FOR NO KEY UPDATE))
      RETURNING id, lease_token, lease_expires_at, cancel_requested_at),
    lost AS (
      INSERT INTO job_events (job_id, ts, event, actor, detail)
      SELECT t.id, $3, 'ZOMBIE_WRITE_REJECTED', 'worker', t.detail
      FROM unnest($1::bigint[], $2::text[], $5::text[]) WITH ORDINALITY AS t(id, lease_token, detail, n) JOIN jobs ON jobs.id = t.id
      WHERE NOT EXISTS (SELECT 1 FROM renewed AS r WHERE r.id = t.id AND r.lease_token = t.lease_token)
      ORDER BY t.n FOR KEY SHARE OF jobs)
    SELECT * FROM renewed`,
  /** (id, leaseToken, progress, now, zombieDetail) in one statement; no row: lease lost, and recorded as a zombie's write. */
  progress: `WITH written AS (UPDATE jobs SET progress = $3 WHERE ${FENCE} RETURNING id),
    ${zombieUnless('written', '$1', '$4', '$5')}
    SELECT id FROM written`,
  /**
   * (ids[], leaseTokens[]) -> what decides each outcome, the rows locked in id order until commit; a lease
   * missing from the answer is lost. The outcome statements below run after it in the same transaction, so
   * they repeat the fence only as a guard.
   */
  heldFactsMany: `SELECT ${HELD_FACTS} FROM jobs WHERE id = ANY($1::bigint[]) AND lease_token = ANY($2::text[]) AND ${IN_FLIGHT}
    ORDER BY id FOR NO KEY UPDATE`,
  /**
   * (ids[], leaseTokens[], startedAts[], now, attempts[], attemptStatuses[], codes[], details[], cpuMs[], peakRssBytes[],
   * stacks[], kinds[] requeue|finishBadly|release, statuses[] QUEUED|FAILED|CANCELLED, runAts[] (requeue's), then the
   * timeline rows as eventInsertMany's five arrays) the outcomes other than success of several held jobs, in one
   * statement: each job's write, fenced; the end of its claim's attempt with its cost (only where the job row was
   * written); and the timeline rows, in order. The caller read and locked the rows (heldFactsMany, expired,
   * heldByOwner) in the same transaction, so the fence is only a guard. A release goes back to the queue without
   * spending a retry, in the place it had (it was due).
   */
  outcomes: `WITH job AS (
      UPDATE jobs AS j SET status = ${ofRow('$13', 'text')}, lease_expires_at = NULL,
        started_at = coalesce(j.started_at, ${ofRow('$3', 'bigint')}), ${OUTCOME_SET}
      WHERE j.id = ANY($1::bigint[]) AND j.lease_token = ${ofRow('$2', 'text')} AND j.${IN_FLIGHT}
      RETURNING j.id, j.lease_token, array_position($1::bigint[], j.id) AS n, ${KIND} AS kind, ${ofRow('$13', 'text')} AS job_status),
    attempt_ended AS (
      UPDATE job_attempts AS a SET status = ($6::text[])[d.n], finished_at = $4, error_code = ($7::text[])[d.n],
        error_detail = ($8::text[])[d.n], cpu_ms = ($9::float8[])[d.n], peak_rss_bytes = ($10::bigint[])[d.n],
        error_stack = ($11::text[])[d.n]
      FROM job AS d
      WHERE a.job_id = d.id AND a.attempt = ($5::int[])[d.n] AND a.lease_token = d.lease_token AND a.status = 'RUNNING'),
    ${afterOutcomes(`SELECT array_agg(id) AS ids, array_agg(job_status) AS statuses FROM job WHERE kind = 'finishBadly'`, '$4')}
    INSERT INTO job_events (job_id, ts, event, actor, detail)
    SELECT e.job_id, e.ts, e.event, e.actor, e.detail
    FROM unnest($15::bigint[], $16::bigint[], $17::text[], $18::text[], $19::text[]) WITH ORDINALITY AS e(job_id, ts, event, actor, detail, n)
      CROSS JOIN after
    ORDER BY e.n`,
  /**
   * (expiredBefore, limit) held jobs whose lease ran out, oldest first, through jobs_lease_expiry, locked.
   * SKIP LOCKED: several sweepers at once share the work; a row another one recovered and committed
   * meanwhile is re-checked after the lock and dropped, so no job is taken back twice.
   */
  expired: `SELECT ${RECOVERY_FACTS} FROM jobs WHERE ${IN_FLIGHT} AND lease_expires_at < $1
    ORDER BY lease_expires_at LIMIT $2 FOR NO KEY UPDATE SKIP LOCKED`,
  /** (ownerId) full rows of the jobs an owner holds, through jobs_owner. */
  heldRowsByOwner: `SELECT ${JOB_COLUMNS} FROM jobs WHERE ${IN_FLIGHT} AND owner_id = $1`,
  /** (ownerId) the jobs an owner holds, through jobs_owner, locked in id order (waits for a heartbeat or sweep in flight). */
  heldByOwner: `SELECT ${RECOVERY_FACTS} FROM jobs WHERE ${IN_FLIGHT} AND owner_id = $1 ORDER BY id FOR NO KEY UPDATE`,
});
