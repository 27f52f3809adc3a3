import { nameAll } from '../connection.js';
import { RUNS } from './jobs.js';
import { measuredIn } from './stats.js';

const MINUTE = `finished_at / 60000 * 60000`;
/** The rankings' order (stats.ts): a minute's costliest are kept in it. */
const BY_CPU = 'cpu_ms DESC, job_id, attempt';
const BY_RSS = 'peak_rss_bytes DESC, job_id, attempt';

/** The stats rollup's writes (../../stats-window.ts), the same sums as the SQLite driver's. */
export const ROLLUP_SQL = nameAll('rollup', {
  /** () -> the minutes the rollup covers (null on a new store), locked: roll-ups of several supervisors take turns. */
  lockState: `SELECT rolled_from AS "from", rolled_until AS until FROM stats_rollup WHERE id = 1 FOR UPDATE`,
  /**
   * (oldest, until) -> the same, unlocked, and whether a job ended between the rollup's end (no earlier than
   * oldest, the first minute kept) and until: a supervisor's tick looks before it takes its turn on the row.
   */
  due: `SELECT r.rolled_from AS "from", r.rolled_until AS until, EXISTS (SELECT 1 FROM jobs
      WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at >= greatest(coalesce(r.rolled_until, $1), $1)
        AND finished_at < $2) AS ended
    FROM stats_rollup AS r WHERE r.id = 1`,
  /** () -> the same, unlocked, for a read. */
  state: `SELECT rolled_from AS "from", rolled_until AS until FROM stats_rollup WHERE id = 1`,
  /**
   * () -> how long ago, by the server's clock (ms), the oldest other transaction holding (or waiting for) a lock
   * on the jobs or their attempts began (null: none); `hidden`: one whose start this role may not see (another
   * role's, or a prepared transaction). The locks of reads and writes: a write may read first, and end jobs
   * after. Not VACUUM's or ANALYZE's (ShareUpdateExclusiveLock), which end none and may run for minutes.
   */
  openWrites: `SELECT (extract(epoch FROM statement_timestamp() - min(a.xact_start)) * 1000)::bigint AS open_ms,
      bool_or(a.xact_start IS NULL) AS hidden
    FROM pg_locks AS l LEFT JOIN pg_stat_activity AS a ON a.pid = l.pid
    WHERE l.locktype = 'relation' AND l.relation IN ('jobs'::regclass, 'job_attempts'::regclass)
      AND l.mode IN ('AccessShareLock', 'RowShareLock', 'RowExclusiveLock') AND l.pid IS DISTINCT FROM pg_backend_pid()`,
  /** (from, until) -> 1 when a job finished in [from, until). */
  anyEnded: `SELECT 1 AS ended FROM jobs
    WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at >= $1 AND finished_at < $2 LIMIT 1`,
  /** (from, until) -> when the first job finished in [from, until) (null: none), a seek per terminal status. */
  firstEnded: `SELECT least(
      (SELECT min(finished_at) FROM jobs WHERE status = 'SUCCEEDED' AND finished_at >= $1 AND finished_at < $2),
      (SELECT min(finished_at) FROM jobs WHERE status = 'FAILED' AND finished_at >= $1 AND finished_at < $2),
      (SELECT min(finished_at) FROM jobs WHERE status = 'CANCELLED' AND finished_at >= $1 AND finished_at < $2)) AS at`,
  /**
   * (from, until, kept, keepFrom) -> add what ended in [from, until) to the rows of its minutes (a minute summed in
   * parts adds each part): the finished jobs by class, status and attempts spent; the measured attempts by class;
   * each minute's `kept` costliest attempts by CPU and by memory (ordered as the rankings read them). Then drop the
   * minutes before keepFrom, and say what is covered.
   */
  rollUp: `WITH measured AS MATERIALIZED (${measuredIn('$1', '$2')}),
    ends AS (INSERT INTO job_end_minutes (minute, class, status, spent, jobs)
      SELECT ${MINUTE}, class, status, ${RUNS}, count(*) FROM jobs
      WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at >= $1 AND finished_at < $2 GROUP BY 1, 2, 3, 4
      ON CONFLICT (minute, class, status, spent) DO UPDATE SET jobs = job_end_minutes.jobs + excluded.jobs),
    cost AS (INSERT INTO attempt_cost_minutes (minute, class, attempts, cpu_ms, max_peak_rss_bytes)
      SELECT ${MINUTE}, class, count(*), sum(cpu_ms), max(peak_rss_bytes) FROM measured GROUP BY 1, 2
      ON CONFLICT (minute, class) DO UPDATE SET attempts = attempt_cost_minutes.attempts + excluded.attempts,
        cpu_ms = attempt_cost_minutes.cpu_ms + excluded.cpu_ms,
        max_peak_rss_bytes = greatest(attempt_cost_minutes.max_peak_rss_bytes, excluded.max_peak_rss_bytes)),
    top AS (INSERT INTO attempt_cost_top (minute, job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at)
      SELECT ${MINUTE}, job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at FROM (
        SELECT *, row_number() OVER (PARTITION BY ${MINUTE} ORDER BY ${BY_CPU}) AS by_cpu,
          row_number() OVER (PARTITION BY ${MINUTE} ORDER BY ${BY_RSS}) AS by_rss FROM measured) AS r
      WHERE by_cpu <= $3 OR by_rss <= $3),
    drop_ends AS (DELETE FROM job_end_minutes WHERE minute < $4),
    drop_cost AS (DELETE FROM attempt_cost_minutes WHERE minute < $4),
    drop_top AS (DELETE FROM attempt_cost_top WHERE minute < $4)
    UPDATE stats_rollup SET rolled_from = $4, rolled_until = $2 WHERE id = 1`,
  /**
   * (from, kept) -> after rollUp (whose own statement cannot see the rows it adds): the minute `from` falls in keeps
   * its `kept` costliest by CPU and by memory. A minute summed in parts took each part's; the minute's own are among them.
   */
  pruneCostTop: `DELETE FROM attempt_cost_top WHERE minute = $1::bigint / 60000 * 60000 AND (job_id, attempt) NOT IN (
      SELECT job_id, attempt FROM (SELECT job_id, attempt, row_number() OVER (ORDER BY ${BY_CPU}) AS by_cpu,
          row_number() OVER (ORDER BY ${BY_RSS}) AS by_rss
        FROM attempt_cost_top WHERE minute = $1::bigint / 60000 * 60000) AS r
      WHERE by_cpu <= $2 OR by_rss <= $2)`,
});
