/**
 * The bare loop of the floor (section 25; section 24 runs it in processes of
 * its own): on leasehold's schema, one statement per batch ends the held
 * jobs and claims the next, writing only the rows the spec's data model
 * names, fenced on each job's lease token.
 */
import type pg from 'pg';
import { BENCH_CLASS } from './leasehold.js';

export const FLOOR_CLAIM_BATCH = 64;
const LEASE_MS = 30_000;

export const floorEnqueueSql = (timeline: boolean) => `WITH added AS (
    INSERT INTO jobs (class, status, payload, created_at, run_at, max_retries)
    SELECT '${BENCH_CLASS}', 'QUEUED', '{"n":' || n || '}', $1, $1, 3 FROM generate_series($2::int, $3::int) AS n RETURNING id)
  ${timeline ? `INSERT INTO job_events (job_id, ts, event, actor) SELECT id, $1, 'ENQUEUED', '${BENCH_CLASS}' FROM added` : 'SELECT count(*) FROM added'}`;

// $1 the held ids, $2 their claim's token prefix (a job's token is the prefix and its id), $3 now, $4 owner, $5 limit, $6 the next claim's prefix.
const settleAndClaimSql = (timeline: boolean) => `WITH done AS (
    UPDATE jobs AS j SET status = 'SUCCEEDED', result = 'null', finished_at = $3, lease_expires_at = NULL
    WHERE j.id = ANY($1::bigint[]) AND j.lease_token = $2 || j.id AND j.status = 'RUNNING' AND j.lease_expires_at > $3
    RETURNING j.id, j.attempts),
  ended AS (
    UPDATE job_attempts AS a SET status = 'SUCCEEDED', finished_at = $3
    FROM done AS d WHERE a.job_id = d.id AND a.attempt = d.attempts),
  ${timeline ? `timeline AS (INSERT INTO job_events (job_id, ts, event, actor) SELECT d.id, $3, e.event, $4 FROM done AS d, unnest(ARRAY['STARTED', 'SUCCEEDED']) AS e(event)),` : ''}
  picked AS (
    SELECT id FROM jobs WHERE class = '${BENCH_CLASS}' AND status = 'QUEUED' AND run_at <= $3
    ORDER BY priority DESC, run_at, id LIMIT $5 FOR UPDATE SKIP LOCKED),
  claimed AS (
    UPDATE jobs AS j SET status = 'RUNNING', owner_id = $4, lease_token = $6 || j.id, claimed_at = $3, started_at = $3,
      lease_expires_at = $3 + ${LEASE_MS}, attempts = j.attempts + 1
    FROM picked AS p WHERE j.id = p.id RETURNING j.id, j.attempts, j.payload),
  attempts_begun AS (
    INSERT INTO job_attempts (job_id, attempt, owner_id, lease_token, started_at, status)
    SELECT id, attempts, $4, $6 || id, $3, 'RUNNING' FROM claimed)
  SELECT id, payload FROM claimed`;

/** Settle and claim on `client` (its search_path on the queue's schema) until no job is left. */
export async function floorLoop(client: pg.Client, index: number, timeline: boolean): Promise<void> {
  const text = settleAndClaimSql(timeline);
  let held: string[] = [];
  let token = '';
  for (let claim = 1; ; claim++) {
    const next = `${index}.${claim}.`;
    const { rows } = await client.query<{ id: string }>({
      name: 'floor',
      text,
      values: [held, token, Date.now(), `floor-${index}`, FLOOR_CLAIM_BATCH, next],
    });
    if (rows.length === 0) return;
    held = rows.map((row) => row.id);
    token = next;
  }
}
