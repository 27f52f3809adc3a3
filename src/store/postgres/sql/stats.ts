import { nameAll } from '../connection.js';
import { IN_FLIGHT } from '../../migration.js';
import { JOB_STATUSES } from '../../types.js';
import { CLASSES_PRESENT } from './jobs.js';
import { errorsCte, ROLLUP_BUCKET_MS, type WindowEdges } from '../../rollup.js';

const TERMINAL = `status IN ('SUCCEEDED', 'FAILED', 'CANCELLED')`;
/**
 * A window [$1, $4) is read as the rollup's buckets of [$2, $3) (../../rollup.ts, windowBounds) and the raw rows
 * at its two edges, [$1, $2) and [$3, $4): `edge` is one raw select for [lo, hi), given its bounds.
 */
const edges: WindowEdges = (edge) => `${edge('$1', '$2')}
      UNION ALL ${edge('$3', '$4')}`;
const ROLLED = `bucket >= $2 AND bucket < $3`;
/**
 * The attempts that ended in the window's raw edges and whose cost was measured, with their class. They have
 * no index of their own (it would take one more entry at every attempt's end, on the hot path): a
 * success ends its job, so the successes are the jobs that ended SUCCEEDED in the window (through
 * jobs_finished) and their last attempt (its number is the job's attempts, its end the job's);
 * every other end carries an error code (FAILED, CANCELLED, LEASE:RELEASED), so the rest are in
 * job_attempts_error, which the top error codes read too. The successes' attempts are read one
 * key each (LATERAL ... LIMIT 1, which the planner cannot turn into a join): with a few thousand
 * jobs in the window it chose to hash all of job_attempts instead, 450 ms at 1e6 jobs against 10.
 */
const MEASURED = `WITH measured AS MATERIALIZED (${edges(
  (lo, hi) => `SELECT a.job_id, a.attempt, j.class, a.status, a.cpu_ms, a.peak_rss_bytes, a.finished_at
      FROM jobs AS j CROSS JOIN LATERAL (
        SELECT job_id, attempt, status, cpu_ms, peak_rss_bytes, finished_at FROM job_attempts
        WHERE job_id = j.id AND attempt = j.attempts AND cpu_ms IS NOT NULL LIMIT 1) AS a
      WHERE j.status = 'SUCCEEDED' AND j.finished_at >= ${lo} AND j.finished_at < ${hi}
    UNION ALL
    SELECT a.job_id, a.attempt, j.class, a.status, a.cpu_ms, a.peak_rss_bytes, a.finished_at
      FROM job_attempts AS a JOIN jobs AS j ON j.id = a.job_id
      WHERE a.error_code IS NOT NULL AND a.finished_at >= ${lo} AND a.finished_at < ${hi} AND a.cpu_ms IS NOT NULL`,
)}),
    ranked AS MATERIALIZED (
      SELECT job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at FROM measured
      UNION ALL
      SELECT job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at FROM cost_top WHERE ${ROLLED})`;
/** The measured attempts with the most of `column` (the edges', and each bucket's kept ones), as a JSON array (the columns of AttemptCostRow). */
const costTop = (column: string) => `(SELECT coalesce(json_agg(top), '[]') FROM (
    SELECT job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at FROM ranked
    ORDER BY ${column} DESC, job_id, attempt LIMIT $5) AS top)`;
const ERRORS = errorsCte(edges, ROLLED);
/** (window) -> SUCCEEDED and FAILED jobs that ended in it by class, status, attempts spent and bucket: the edges' and the buckets'. */
const ENDED = `ended(class, status, attempts, bucket, jobs) AS (${edges(
  (lo, hi) => `SELECT class, status, attempts - releases, finished_at / ${ROLLUP_BUCKET_MS} * ${ROLLUP_BUCKET_MS}, count(*) FROM jobs
      WHERE status IN ('SUCCEEDED', 'FAILED') AND finished_at >= ${lo} AND finished_at < ${hi}
      GROUP BY 1, 2, 3, 4`,
)}
      UNION ALL SELECT class, status, runs, bucket, jobs FROM job_rollup WHERE ${ROLLED} AND status IN ('SUCCEEDED', 'FAILED'))`;

/** The operator's questions (`leasehold stats`, /metrics), read-only; the same answers as the SQLite driver's. */
export const STATS_SQL = nameAll('stats', {
  /** () -> the classes present, in order: a loose scan of jobs_class_status, one seek each. */
  classesPresent: `WITH RECURSIVE ${CLASSES_PRESENT} SELECT class FROM classes WHERE class IS NOT NULL`,
  /**
   * (class) -> (status, count) for each status present in the class, in order: one range count each in
   * jobs_class_status (a GROUP BY over the whole table was a parallel scan of every row, twice as long at 1e6 jobs).
   */
  countsOfClass: `SELECT s.status, n.count FROM (VALUES ${[...JOB_STATUSES].sort().map((status) => `('${status}')`).join(', ')}) AS s(status)
    CROSS JOIN LATERAL (SELECT count(*) AS count FROM jobs WHERE class = $1 AND status = s.status) AS n
    WHERE n.count > 0 ORDER BY s.status`,
  /**
   * (now) -> (class, run_at) for each class with jobs due, the oldest due run_at. jobs_claim orders a
   * class's QUEUED jobs by priority first, so its least run_at is the least of each priority's first
   * entry: a loose scan of the classes present, then of each class's priorities, then one seek per
   * priority. The supervisor asks every few seconds, so it must not read a deep queue row by row.
   */
  oldestDue: `WITH RECURSIVE ${CLASSES_PRESENT},
    priorities(class, priority) AS (
      SELECT c.class, (SELECT max(priority) FROM jobs WHERE class = c.class AND status = 'QUEUED')
      FROM classes AS c WHERE c.class IS NOT NULL
      UNION ALL
      SELECT p.class, (SELECT max(priority) FROM jobs WHERE class = p.class AND status = 'QUEUED' AND priority < p.priority)
      FROM priorities AS p WHERE p.priority IS NOT NULL)
    SELECT p.class, min(f.run_at) AS run_at FROM priorities AS p
      CROSS JOIN LATERAL (SELECT run_at FROM jobs WHERE class = p.class AND status = 'QUEUED' AND priority = p.priority ORDER BY run_at LIMIT 1) AS f
    WHERE p.priority IS NOT NULL GROUP BY p.class HAVING min(f.run_at) <= $1 ORDER BY p.class`,
  /** (limit) -> in-flight jobs, held longest first, with their owner's pid; only held rows live in the partial indexes. */
  inFlightOldest: `SELECT j.id, j.class, j.status, j.owner_id, w.pid, j.attempts, j.claimed_at, j.started_at,
      j.heartbeat_at, j.lease_expires_at, j.cancel_requested_at
    FROM jobs AS j LEFT JOIN workers AS w ON w.id = j.owner_id
    WHERE j.${IN_FLIGHT} ORDER BY j.claimed_at, j.id LIMIT $1`,
  /** (window) -> jobs that ended SUCCEEDED or FAILED in it, by class, status and attempts spent (handed-back claims not counted). */
  retryDistribution: `WITH ${ENDED}
    SELECT class, status, attempts, sum(jobs)::bigint AS jobs FROM ended
    GROUP BY class, status, attempts HAVING sum(jobs) > 0 ORDER BY class, status, attempts`,
  /** (window, limit) -> the most frequent error codes of attempts that ended in it (the edges through job_attempts_error). */
  topErrors: `WITH ${ERRORS}
    SELECT code, sum(count)::bigint AS count, max(last_at) AS last_at FROM errors
    GROUP BY code ORDER BY 2 DESC, 1 LIMIT $5`,
  /** (window, limit) -> the same, Top-N within each class. */
  topErrorsByClass: `WITH ${ERRORS}
    SELECT class, code, count, last_at FROM (
      SELECT class, code, sum(count)::bigint AS count, max(last_at) AS last_at, row_number() OVER (PARTITION BY class ORDER BY sum(count) DESC, code) AS rank
      FROM errors GROUP BY class, code) AS ranked
    WHERE rank <= $5 ORDER BY class, count DESC, code`,
  /**
   * (window, limit) -> one row, three JSON arrays: per class, the measured attempts that ended in it (how many,
   * their CPU total and mean, the highest peak RSS; most CPU first), and the `limit` that used the most CPU and the
   * most memory. One statement reads the window once: three read it three times (18 ms each at 1e6 jobs).
   */
  costRanking: `${MEASURED}
    SELECT (SELECT coalesce(json_agg(c), '[]') FROM (
        SELECT class, sum(attempts)::bigint AS attempts, sum(cpu_ms) AS cpu_ms, sum(cpu_ms) / sum(attempts) AS mean_cpu_ms,
          max(max_peak_rss_bytes) AS max_peak_rss_bytes
        FROM (
          SELECT class, count(*) AS attempts, sum(cpu_ms) AS cpu_ms, max(peak_rss_bytes) AS max_peak_rss_bytes FROM measured GROUP BY class
          UNION ALL
          SELECT class, sum(measured), sum(cpu_ms), max(max_peak_rss_bytes) FROM attempt_rollup WHERE ${ROLLED} AND measured > 0 GROUP BY class) AS parts
        GROUP BY class ORDER BY sum(cpu_ms) DESC, class) AS c) AS by_class,
      ${costTop('cpu_ms')} AS top_cpu,
      ${costTop('peak_rss_bytes')} AS top_rss`,
  /** (window) -> jobs that reached each terminal status in it (throughput); the edges through jobs_finished. */
  finishedSince: `SELECT status, sum(count)::bigint AS count FROM (${edges(
    (lo, hi) => `SELECT status, count(*) AS count FROM jobs WHERE ${TERMINAL} AND finished_at >= ${lo} AND finished_at < ${hi} GROUP BY status`,
  )}
      UNION ALL SELECT status, sum(jobs) FROM job_rollup WHERE ${ROLLED} GROUP BY status) AS parts
    GROUP BY status HAVING sum(count) > 0 ORDER BY status`,
  /** (window) -> (minute, status, count): SUCCEEDED and FAILED jobs per minute that finished in it. */
  finishedByMinute: `WITH ${ENDED}
    SELECT bucket / 60000 * 60000 AS minute, status, sum(jobs)::bigint AS count FROM ended
    GROUP BY 1, 2 HAVING sum(jobs) > 0 ORDER BY 1, 2`,
  /** () -> ZOMBIE_WRITE_REJECTED events still in the timeline, through the partial job_events_zombie. */
  zombieWrites: `SELECT count(*) AS count FROM job_events WHERE event = 'ZOMBIE_WRITE_REJECTED'`,
  /**
   * () -> the bytes of the store's own tables with their indexes and TOAST (the schema of the session), and the
   * block size. PostgreSQL reuses dead space through VACUUM; it has no free-page count to report.
   */
  databaseSize: `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes, current_setting('block_size')::int AS page_size
    FROM pg_class AS c WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace
      AND c.relname IN ('jobs', 'job_attempts', 'job_events', 'workers', 'schema_migrations', 'job_rollup', 'attempt_rollup', 'cost_top')`,
  /** () -> the highest migration applied; 0 on a blank schema. */
  schemaVersion: `SELECT coalesce(max(version), 0) AS version FROM schema_migrations`,
  /** () -> the database server's clock, epoch ms: to measure a host's offset from it. */
  serverNow: `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now`,
  /** () -> 1: the database answers. */
  ping: `SELECT 1 AS ok`,
});
