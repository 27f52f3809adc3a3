import { prepareAll, type SqliteDb } from '../connection.js';
import { IN_FLIGHT } from '../../migration.js';
import { JOB_STATUSES } from '../../types.js';
import { CLASSES_PRESENT, RUNS } from './jobs.js';

const TERMINAL = `('SUCCEEDED', 'FAILED', 'CANCELLED')`;
/** Attempts handed back at shutdown carry this code; they are not errors. */
const REAL_ERROR = `error_code IS NOT NULL AND error_code <> 'LEASE:RELEASED'`;
/**
 * The attempts that ended in [lo, hi) (no hi: from lo on) and whose cost was measured, with their class. They
 * have no index of their own (it would take one more entry at every attempt's end, on the hot path): a
 * success ends its job, so the successes are the jobs that ended SUCCEEDED in the window (through
 * jobs_finished) and their last attempt (its number is the job's attempts, its end the job's);
 * every other end carries an error code (FAILED, CANCELLED, LEASE:RELEASED), so the rest are in
 * job_attempts_error, which the top error codes read too: its entries are filtered by their own
 * finished_at first (w), since a row of job_attempts (WITHOUT ROWID) costs a seek per entry read.
 */
export const measuredIn = (lo: string, hi?: string) => {
  const range = (column: string) => `${column} >= ${lo}${hi === undefined ? '' : ` AND ${column} < ${hi}`}`;
  return `SELECT a.job_id, a.attempt, j.class, a.status, a.cpu_ms, a.peak_rss_bytes, a.finished_at
      FROM jobs AS j INDEXED BY jobs_finished JOIN job_attempts AS a ON a.job_id = j.id AND a.attempt = j.attempts
      WHERE j.status = 'SUCCEEDED' AND ${range('j.finished_at')} AND a.cpu_ms IS NOT NULL
    UNION ALL
    SELECT a.job_id, a.attempt, j.class, a.status, a.cpu_ms, a.peak_rss_bytes, a.finished_at
      FROM (SELECT job_id, attempt FROM job_attempts INDEXED BY job_attempts_error WHERE error_code IS NOT NULL AND ${range('finished_at')}) AS w
      JOIN job_attempts AS a ON a.job_id = w.job_id AND a.attempt = w.attempt JOIN jobs AS j ON j.id = a.job_id
      WHERE a.cpu_ms IS NOT NULL`;
};
/**
 * A window's reads (../../stats-window.ts) take the jobs that ended in [@headFrom, @headUntil) and from
 * @tailFrom on, and the rollup's minutes in [@rolledFrom, @rolledUntil).
 */
const ROLLED = `minute >= @rolledFrom AND minute < @rolledUntil`;
const MEASURED = `WITH measured AS (${measuredIn('@headFrom', '@headUntil')} UNION ALL ${measuredIn('@tailFrom')})`;
/** The finished jobs of a window whose status is in `statuses`, through jobs_finished: `select` of each, in its two ranges. */
const endedIn = (
  select: string,
  statuses: string,
  tailUntil = '',
) => `SELECT ${select} FROM jobs INDEXED BY jobs_finished
      WHERE status IN ${statuses} AND finished_at >= @headFrom AND finished_at < @headUntil
    UNION ALL SELECT ${select} FROM jobs INDEXED BY jobs_finished WHERE status IN ${statuses} AND finished_at >= @tailFrom${tailUntil}`;
const ENDED = `('SUCCEEDED', 'FAILED')`;
/** (window, limit) -> the measured attempts of the window with the most of `column`: the rollup keeps each minute's first. */
const costTop = (column: string) => `${MEASURED}
  SELECT job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at FROM (
    SELECT job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at FROM measured
    UNION ALL SELECT job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at FROM attempt_cost_top WHERE ${ROLLED})
  ORDER BY ${column} DESC, job_id, attempt LIMIT @limit`;

/**
 * The operator's questions (`leasehold stats`, /metrics), read-only. Each one
 * walks an index; test/store/stats-plans.test.ts holds them to it.
 */
export const STATS_SQL = {
  /**
   * () -> (class, status, count) for every pair present, by class and status: for each class present (a loose
   * scan of jobs_class_status) and each status, one range count in that covering index. A GROUP BY over the
   * whole index compares each entry's key with the one before: work for every row, not a seek per pair.
   */
  countsByClassStatus: `WITH RECURSIVE ${CLASSES_PRESENT},
    statuses(status) AS (VALUES ${[...JOB_STATUSES]
      .sort()
      .map((status) => `('${status}')`)
      .join(', ')}),
    pairs(class, status, count) AS MATERIALIZED (
      SELECT c.class, s.status, (SELECT count(*) FROM jobs WHERE class = c.class AND status = s.status)
      FROM classes AS c CROSS JOIN statuses AS s WHERE c.class IS NOT NULL)
    SELECT class, status, count FROM pairs WHERE count > 0 ORDER BY class, status`,
  /**
   * (now) -> (class, run_at) for each class with jobs due, the oldest due run_at. jobs_claim orders a
   * class's QUEUED jobs by priority first, so its least run_at is the least of each priority's first
   * entry: a loose scan of the classes present, then of each class's priorities, then one seek per
   * priority. The supervisor asks every few seconds, so it must not read a deep queue row by row.
   */
  oldestDue: `WITH RECURSIVE ${CLASSES_PRESENT},
    priorities(class, priority) AS (
      SELECT c.class, (SELECT max(priority) FROM jobs INDEXED BY jobs_claim WHERE class = c.class AND status = 'QUEUED')
      FROM classes AS c WHERE c.class IS NOT NULL
      UNION ALL
      SELECT p.class, (SELECT max(priority) FROM jobs INDEXED BY jobs_claim WHERE class = p.class AND status = 'QUEUED' AND priority < p.priority)
      FROM priorities AS p WHERE p.priority IS NOT NULL),
    firsts(class, run_at) AS (
      SELECT p.class, (SELECT run_at FROM jobs INDEXED BY jobs_claim WHERE class = p.class AND status = 'QUEUED' AND priority = p.priority ORDER BY run_at LIMIT 1)
      FROM priorities AS p WHERE p.priority IS NOT NULL)
    SELECT class, min(run_at) AS run_at FROM firsts GROUP BY class HAVING min(run_at) <= @now ORDER BY class`,
  /**
   * (limit) -> in-flight jobs, held longest first, with their owner's pid. Only
   * held rows live in the partial jobs_lease_expiry (a few per worker), so the
   * sort is over a handful of rows.
   */
  inFlightOldest: `SELECT j.id, j.class, j.status, j.owner_id, w.pid, j.attempts, j.claimed_at, j.started_at,
      j.heartbeat_at, j.lease_expires_at, j.cancel_requested_at
    FROM jobs AS j INDEXED BY jobs_lease_expiry LEFT JOIN workers AS w ON w.id = j.owner_id
    WHERE j.${IN_FLIGHT} ORDER BY j.claimed_at, j.id LIMIT @limit`,
  /**
   * (window) -> jobs that ended SUCCEEDED or FAILED in the window, by class, status and attempts spent (claims
   * handed back at shutdown do not count). Pinned to jobs_finished: with statistics the planner skip-scans
   * jobs_class_status instead, which reads every finished job whatever the window.
   */
  retryDistribution: `SELECT class, status, attempts, sum(jobs) AS jobs FROM (
      ${endedIn(`class, status, ${RUNS} AS attempts, 1 AS jobs`, ENDED)}
      UNION ALL SELECT class, status, spent, jobs FROM job_end_minutes WHERE ${ROLLED} AND status IN ${ENDED})
    GROUP BY class, status, attempts ORDER BY class, status, attempts`,
  /** (since, limit) -> the most frequent error codes of attempts that ended since then, through job_attempts_error. */
  topErrors: `SELECT error_code AS code, count(*) AS count, max(finished_at) AS last_at FROM job_attempts
    WHERE ${REAL_ERROR} AND finished_at >= @since
    GROUP BY error_code ORDER BY count DESC, code LIMIT @limit`,
  /** (since, limit) -> the same, Top-N within each class (attempts through job_attempts_error, class by the jobs key). */
  topErrorsByClass: `SELECT class, code, count, last_at FROM (
      SELECT j.class AS class, a.error_code AS code, count(*) AS count, max(a.finished_at) AS last_at,
        row_number() OVER (PARTITION BY j.class ORDER BY count(*) DESC, a.error_code) AS rank
      FROM job_attempts AS a JOIN jobs AS j ON j.id = a.job_id
      WHERE a.error_code IS NOT NULL AND a.error_code <> 'LEASE:RELEASED' AND a.finished_at >= @since
      GROUP BY j.class, a.error_code)
    WHERE rank <= @limit ORDER BY class, count DESC, code`,
  /**
   * (window) -> per class, the measured attempts that ended in the window: how many, their CPU (total and mean)
   * and the highest peak RSS; most CPU first. Both halves pinned to their index, as retryDistribution is.
   */
  costByClass: `${MEASURED}
    SELECT class, sum(attempts) AS attempts, sum(cpu_ms) AS cpu_ms, sum(cpu_ms) / sum(attempts) AS mean_cpu_ms, max(max_peak_rss_bytes) AS max_peak_rss_bytes FROM (
      SELECT class, 1 AS attempts, cpu_ms, peak_rss_bytes AS max_peak_rss_bytes FROM measured
      UNION ALL SELECT class, attempts, cpu_ms, max_peak_rss_bytes FROM attempt_cost_minutes WHERE ${ROLLED})
    GROUP BY class ORDER BY sum(cpu_ms) DESC, class`,
  /** (window, limit) -> the measured attempts that ended in the window that used the most CPU. */
  costTopCpu: costTop('cpu_ms'),
  /** (window, limit) -> the same, by peak resident memory. */
  costTopRss: costTop('peak_rss_bytes'),
  /** (window) -> jobs that reached each terminal status in the window (throughput), through jobs_finished. */
  finishedSince: `SELECT status, sum(count) AS count FROM (
      ${endedIn('status, 1 AS count', TERMINAL)}
      UNION ALL SELECT status, jobs FROM job_end_minutes WHERE ${ROLLED})
    GROUP BY status`,
  /**
   * (window, until) -> (minute, status, count): SUCCEEDED and FAILED jobs per minute that finished in the window
   * and before `until`, through jobs_finished (pinned, as retryDistribution).
   */
  finishedByMinute: `SELECT minute, status, sum(count) AS count FROM (
      ${endedIn('finished_at / 60000 * 60000 AS minute, status, 1 AS count', ENDED, ' AND finished_at < @until')}
      UNION ALL SELECT minute, status, jobs FROM job_end_minutes WHERE ${ROLLED} AND status IN ${ENDED})
    GROUP BY minute, status ORDER BY minute, status`,
  /** () -> ZOMBIE_WRITE_REJECTED events still in the timeline, through the partial job_events_zombie. */
  zombieWrites: `SELECT count(*) AS count FROM job_events WHERE event = 'ZOMBIE_WRITE_REJECTED'`,
  /** () -> the file's size in pages, and the pages free for reuse. */
  databaseSize: `SELECT p.page_count, s.page_size, f.freelist_count FROM pragma_page_count() AS p, pragma_page_size() AS s,
    pragma_freelist_count() AS f`,
  /** () -> the highest migration applied; 0 on a blank file. */
  schemaVersion: `SELECT coalesce(max(version), 0) AS version FROM schema_migrations`,
  /** () -> 1: the database answers. */
  ping: `SELECT 1 AS ok`,
};

export const prepareStatsStatements = (db: SqliteDb) => prepareAll(db, STATS_SQL);

export type StatsStatements = ReturnType<typeof prepareStatsStatements>;
