import { nameAll } from '../connection.js';
import { IN_FLIGHT } from '../../migration.js';
import { JOB_STATUSES } from '../../types.js';
import { CLASSES_PRESENT, RUNS } from './jobs.js';

const TERMINAL = `('SUCCEEDED', 'FAILED', 'CANCELLED')`;
/**
 * The attempts that ended in [lo, hi) (no hi: from lo on) and whose cost was measured, with their class. They
 * have no index of their own (it would take one more entry at every attempt's end, on the hot path): a
 * success ends its job, so the successes are the jobs that ended SUCCEEDED in the window (through
 * jobs_finished) and their last attempt (its number is the job's attempts, its end the job's);
 * every other end carries an error code (FAILED, CANCELLED, LEASE:RELEASED), so the rest are in
 * job_attempts_error, which the top error codes read too. The successes' attempts are read one
 * key each (LATERAL ... LIMIT 1, which the planner cannot turn into a join): with a few thousand
 * jobs in the window it chose to hash all of job_attempts instead, a cost that grows with the table, not the window.
 */
export const measuredIn = (lo: string, hi?: string) => {
  const range = (column: string) => `${column} >= ${lo}${hi === undefined ? '' : ` AND ${column} < ${hi}`}`;
  return `SELECT a.job_id, a.attempt, j.class, a.status, a.cpu_ms, a.peak_rss_bytes, a.finished_at
      FROM jobs AS j CROSS JOIN LATERAL (
        SELECT job_id, attempt, status, cpu_ms, peak_rss_bytes, finished_at FROM job_attempts
        WHERE job_id = j.id AND attempt = j.attempts AND cpu_ms IS NOT NULL LIMIT 1) AS a
      WHERE j.status = 'SUCCEEDED' AND ${range('j.finished_at')}
    UNION ALL
    SELECT a.job_id, a.attempt, j.class, a.status, a.cpu_ms, a.peak_rss_bytes, a.finished_at
      FROM job_attempts AS a JOIN jobs AS j ON j.id = a.job_id
      WHERE a.error_code IS NOT NULL AND ${range('a.finished_at')} AND a.cpu_ms IS NOT NULL`;
};
/**
 * A window's reads (../../stats-window.ts) take the jobs that ended in [$1, $2) and from $5 on, and the
 * rollup's minutes in [$3, $4); a statement's own values follow.
 */
const ROLLED = `minute >= $3 AND minute < $4`;
const MEASURED = `WITH measured AS MATERIALIZED (${measuredIn('$1', '$2')} UNION ALL ${measuredIn('$5')})`;
/** The finished jobs of a window whose status is in `statuses`: `select` of each, in its two ranges. */
const endedIn = (
  select: string,
  statuses: string,
  tailUntil = '',
) => `SELECT ${select} FROM jobs WHERE status IN ${statuses} AND finished_at >= $1 AND finished_at < $2
    UNION ALL SELECT ${select} FROM jobs WHERE status IN ${statuses} AND finished_at >= $5${tailUntil}`;
const ENDED = `('SUCCEEDED', 'FAILED')`;
/** The measured attempts with the most of `column`, as a JSON array (the columns of AttemptCostRow): the rollup keeps each minute's first. */
const costTop = (column: string) => `(SELECT coalesce(json_agg(top), '[]') FROM (
    SELECT job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at FROM (
      SELECT job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at FROM measured
      UNION ALL SELECT job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at FROM attempt_cost_top WHERE ${ROLLED}) AS c
    ORDER BY ${column} DESC, job_id, attempt LIMIT $6) AS top)`;

/** The operator's questions (`leasehold stats`, /metrics), read-only; the same answers as the SQLite driver's. */
export const STATS_SQL = nameAll('stats', {
  /** () -> the classes present, in order: a loose scan of jobs_class_status, one seek each. */
  classesPresent: `WITH RECURSIVE ${CLASSES_PRESENT} SELECT class FROM classes WHERE class IS NOT NULL ORDER BY class`,
  /**
   * (class) -> (status, count) for each status present in the class, in order: one range count each in
   * jobs_class_status (a GROUP BY over the whole table is a parallel scan of every row, however few the classes).
   * Run with IN_INDEX (../connection.ts): where the statistics say one class and one status (a drained burst,
   * analyzed) the planner scans the table once per status, or walks the primary key, many times as long
   * (docs/performance.md).
   */
  countsOfClass: `SELECT s.status, n.count FROM (VALUES ${[...JOB_STATUSES]
    .sort()
    .map((status) => `('${status}')`)
    .join(', ')}) AS s(status)
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
  /**
   * (limit) -> in-flight jobs, held longest first, with their owner's pid; only held rows live in the partial indexes.
   * Run with IN_INDEX: a bitmap scan of them visits the row of every dead in-flight version at each read.
   */
  inFlightOldest: `SELECT j.id, j.class, j.status, j.owner_id, w.pid, j.attempts, j.claimed_at, j.started_at,
      j.heartbeat_at, j.lease_expires_at, j.cancel_requested_at
    FROM jobs AS j LEFT JOIN workers AS w ON w.id = j.owner_id
    WHERE j.${IN_FLIGHT} ORDER BY j.claimed_at, j.id LIMIT $1`,
  /** (window) -> jobs that ended SUCCEEDED or FAILED in the window, by class, status and attempts spent (handed-back claims not counted). */
  retryDistribution: `SELECT class, status, attempts, sum(jobs)::bigint AS jobs FROM (
      ${endedIn(`class, status, ${RUNS} AS attempts, 1 AS jobs`, ENDED)}
      UNION ALL SELECT class, status, spent, jobs FROM job_end_minutes WHERE ${ROLLED} AND status IN ${ENDED}) AS e
    GROUP BY class, status, attempts ORDER BY class, status, attempts`,
  /** (since, limit) -> the most frequent error codes of attempts that ended since then, through job_attempts_error. */
  topErrors: `SELECT error_code AS code, count(*) AS count, max(finished_at) AS last_at FROM job_attempts
    WHERE error_code IS NOT NULL AND error_code <> 'LEASE:RELEASED' AND finished_at >= $1
    GROUP BY error_code ORDER BY 2 DESC, 1 LIMIT $2`,
  /** (since, limit) -> the same, Top-N within each class. */
  topErrorsByClass: `SELECT class, code, count, last_at FROM (
      SELECT j.class AS class, a.error_code AS code, count(*) AS count, max(a.finished_at) AS last_at,
        row_number() OVER (PARTITION BY j.class ORDER BY count(*) DESC, a.error_code) AS rank
      FROM job_attempts AS a JOIN jobs AS j ON j.id = a.job_id
      WHERE a.error_code IS NOT NULL AND a.error_code <> 'LEASE:RELEASED' AND a.finished_at >= $1
      GROUP BY j.class, a.error_code) AS ranked
    WHERE rank <= $2 ORDER BY class, count DESC, code`,
  /**
   * (window, limit) -> one row, three JSON arrays: per class, the measured attempts that
   * ended in the window (how many, their CPU total and mean, the highest peak RSS; most CPU first), and the
   * `limit` that used the most CPU and the most memory. One statement reads the window once, where three would
   * read it three times.
   */
  costRanking: `${MEASURED}
    SELECT (SELECT coalesce(json_agg(c), '[]') FROM (
        SELECT class, sum(attempts)::bigint AS attempts, sum(cpu_ms) AS cpu_ms, sum(cpu_ms) / sum(attempts) AS mean_cpu_ms,
          max(max_peak_rss_bytes) AS max_peak_rss_bytes FROM (
          SELECT class, 1 AS attempts, cpu_ms, peak_rss_bytes AS max_peak_rss_bytes FROM measured
          UNION ALL SELECT class, attempts, cpu_ms, max_peak_rss_bytes FROM attempt_cost_minutes WHERE ${ROLLED}) AS m
        GROUP BY class ORDER BY sum(cpu_ms) DESC, class) AS c) AS by_class,
      ${costTop('cpu_ms')} AS top_cpu,
      ${costTop('peak_rss_bytes')} AS top_rss`,
  /** (window) -> jobs that reached each terminal status in the window (throughput), through jobs_finished. */
  finishedSince: `SELECT status, sum(count)::bigint AS count FROM (
      ${endedIn('status, 1 AS count', TERMINAL)}
      UNION ALL SELECT status, jobs FROM job_end_minutes WHERE ${ROLLED}) AS e
    GROUP BY status ORDER BY status`,
  /** (window, until) -> (minute, status, count): SUCCEEDED and FAILED jobs per minute that finished in the window and before `until`. */
  finishedByMinute: `SELECT minute, status, sum(count)::bigint AS count FROM (
      ${endedIn('finished_at / 60000 * 60000 AS minute, status, 1 AS count', ENDED, ' AND finished_at < $6')}
      UNION ALL SELECT minute, status, jobs FROM job_end_minutes WHERE ${ROLLED} AND status IN ${ENDED}) AS e
    GROUP BY minute, status ORDER BY minute, status`,
  /** () -> ZOMBIE_WRITE_REJECTED events still in the timeline, through the partial job_events_zombie. */
  zombieWrites: `SELECT count(*) AS count FROM job_events WHERE event = 'ZOMBIE_WRITE_REJECTED'`,
  /**
   * () -> the bytes of the store's own tables with their indexes and TOAST (the schema of the session), and the
   * block size. PostgreSQL reuses dead space through VACUUM; it has no free-page count to report.
   */
  databaseSize: `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes, current_setting('block_size')::int AS page_size
    FROM pg_class AS c WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace
      AND c.relname IN ('jobs', 'job_attempts', 'job_events', 'workers', 'schema_migrations')`,
  /** () -> the highest migration applied; 0 on a blank schema. */
  schemaVersion: `SELECT coalesce(max(version), 0) AS version FROM schema_migrations`,
  /** () -> the database server's clock, epoch ms: what a store's clock is anchored on (../server-clock.ts). */
  serverNow: `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now`,
  /** () -> 1: the database answers. */
  ping: `SELECT 1 AS ok`,
});
