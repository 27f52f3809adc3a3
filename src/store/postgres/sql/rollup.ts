import { nameAll } from '../connection.js';
import { COST_TOP_KEPT, mayRank, ROLLUP_BUCKET_MS } from '../../rollup.js';

const JOB_UPSERT = `ON CONFLICT (bucket, class, status, runs) DO UPDATE SET jobs = job_rollup.jobs + excluded.jobs`;
const ATTEMPT_UPSERT = `ON CONFLICT (bucket, class, code) DO UPDATE SET ended = attempt_rollup.ended + excluded.ended,
      measured = attempt_rollup.measured + excluded.measured, cpu_ms = attempt_rollup.cpu_ms + excluded.cpu_ms,
      max_peak_rss_bytes = greatest(attempt_rollup.max_peak_rss_bytes, excluded.max_peak_rss_bytes),
      last_at = greatest(attempt_rollup.last_at, excluded.last_at)`;

/**
 * SETTLE_SQL's share of the rollup (../../rollup.ts): the successes its `done` wrote at `now`, added in the same
 * statement, so that only the rows its fence let through count. Rows are upserted in key order, as ROLLUP_SQL's.
 */
export const successRollupCtes = (now: string) => `rolled_jobs AS (
      INSERT INTO job_rollup (bucket, class, status, runs, jobs)
      SELECT ${now} / ${ROLLUP_BUCKET_MS} * ${ROLLUP_BUCKET_MS}, class, 'SUCCEEDED', runs, count(*) FROM done GROUP BY class, runs ORDER BY class, runs
      ${JOB_UPSERT}),
    rolled_attempts AS (
      INSERT INTO attempt_rollup (bucket, class, code, ended, measured, cpu_ms, max_peak_rss_bytes, last_at)
      SELECT ${now} / ${ROLLUP_BUCKET_MS} * ${ROLLUP_BUCKET_MS}, class, coalesce(code, ''), count(*), count(cpu_ms), coalesce(sum(cpu_ms), 0),
        coalesce(max(coalesce(peak_rss_bytes, 0)) FILTER (WHERE cpu_ms IS NOT NULL), 0), ${now}
      FROM done GROUP BY class, coalesce(code, '') ORDER BY class, coalesce(code, '')
      ${ATTEMPT_UPSERT}),
    rolled_top AS (
      INSERT INTO cost_top (bucket, job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at)
      SELECT bucket, job_id, attempt, class, status, cpu_ms, peak_rss_bytes, ${now} FROM (
        SELECT ${now} / ${ROLLUP_BUCKET_MS} * ${ROLLUP_BUCKET_MS} AS bucket, id AS job_id, attempts AS attempt, class, attempt_status AS status, cpu_ms,
          coalesce(peak_rss_bytes, 0) AS peak_rss_bytes,
          row_number() OVER (ORDER BY cpu_ms DESC, id) AS by_cpu, row_number() OVER (ORDER BY coalesce(peak_rss_bytes, 0) DESC, id) AS by_rss
        FROM done WHERE cpu_ms IS NOT NULL) AS c
      WHERE (by_cpu <= ${COST_TOP_KEPT} OR by_rss <= ${COST_TOP_KEPT}) AND (${mayRank('cpu_ms', 'c.bucket')} OR ${mayRank('peak_rss_bytes', 'c.bucket')})
      ON CONFLICT (job_id, attempt) DO NOTHING)`;

/** The rollup's writes for outcome plans (rollupOf's rows, each table's as one JSON array), and its retention. */
export const ROLLUP_SQL = nameAll('rollup', {
  /** (jobs, attempts, top) adds a batch's rows, one statement for the three tables. */
  add: `WITH rolled_jobs AS (
      INSERT INTO job_rollup (bucket, class, status, runs, jobs)
      SELECT bucket, class, status, runs, jobs FROM json_to_recordset($1::json) AS r(bucket bigint, class text, status text, runs int, jobs bigint)
      ORDER BY class, status, runs
      ${JOB_UPSERT}),
    rolled_attempts AS (
      INSERT INTO attempt_rollup (bucket, class, code, ended, measured, cpu_ms, max_peak_rss_bytes, last_at)
      SELECT bucket, class, code, ended, measured, cpu_ms, max_peak_rss_bytes, last_at
      FROM json_to_recordset($2::json) AS r(bucket bigint, class text, code text, ended bigint, measured bigint, cpu_ms float8, max_peak_rss_bytes bigint, last_at bigint)
      ORDER BY class, code
      ${ATTEMPT_UPSERT})
    INSERT INTO cost_top (bucket, job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at)
    SELECT c.* FROM json_to_recordset($3::json)
      AS c(bucket bigint, job_id bigint, attempt int, class text, status text, cpu_ms float8, peak_rss_bytes bigint, finished_at bigint)
    WHERE ${mayRank('cpu_ms', 'c.bucket')} OR ${mayRank('peak_rss_bytes', 'c.bucket')}
    ON CONFLICT (job_id, attempt) DO NOTHING`,
  /** (before) deletes the buckets older than any window reads (retention). */
  prune: `WITH jobs_gone AS (DELETE FROM job_rollup WHERE bucket < $1), attempts_gone AS (DELETE FROM attempt_rollup WHERE bucket < $1)
    DELETE FROM cost_top WHERE bucket < $1`,
});
