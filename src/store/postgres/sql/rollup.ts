import { nameAll } from '../connection.js';
import { RUNS } from './jobs.js';
import { measuredIn } from './stats.js';

const MINUTE = `finished_at / 60000 * 60000`;

/** The stats rollup's writes (../../stats-window.ts), the same sums as the SQLite driver's. */
export const ROLLUP_SQL = nameAll('rollup', {
  /** () -> the minutes the rollup covers (null on a new store), locked: roll-ups of several supervisors take turns. */
  lockState: `SELECT rolled_from AS "from", rolled_until AS until FROM stats_rollup WHERE id = 1 FOR UPDATE`,
  /** () -> the same, unlocked, for a read. */
  state: `SELECT rolled_from AS "from", rolled_until AS until FROM stats_rollup WHERE id = 1`,
  /**
   * (from, until, kept, keepFrom) -> sum the minutes [from, until): their finished jobs by class, status and
   * attempts spent; their measured attempts by class; each minute's `kept` costliest attempts by CPU and by
   * memory (ordered as the rankings read them). Then drop the minutes before keepFrom, and say what is covered.
   */
  rollUp: `WITH measured AS MATERIALIZED (${measuredIn('$1', '$2')}),
    ends AS (INSERT INTO job_end_minutes (minute, class, status, spent, jobs)
      SELECT ${MINUTE}, class, status, ${RUNS}, count(*) FROM jobs
      WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at >= $1 AND finished_at < $2 GROUP BY 1, 2, 3, 4),
    cost AS (INSERT INTO attempt_cost_minutes (minute, class, attempts, cpu_ms, max_peak_rss_bytes)
      SELECT ${MINUTE}, class, count(*), sum(cpu_ms), max(peak_rss_bytes) FROM measured GROUP BY 1, 2),
    top AS (INSERT INTO attempt_cost_top (minute, job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at)
      SELECT ${MINUTE}, job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at FROM (
        SELECT *, row_number() OVER (PARTITION BY ${MINUTE} ORDER BY cpu_ms DESC, job_id, attempt) AS by_cpu,
          row_number() OVER (PARTITION BY ${MINUTE} ORDER BY peak_rss_bytes DESC, job_id, attempt) AS by_rss FROM measured) AS r
      WHERE by_cpu <= $3 OR by_rss <= $3),
    drop_ends AS (DELETE FROM job_end_minutes WHERE minute < $4),
    drop_cost AS (DELETE FROM attempt_cost_minutes WHERE minute < $4),
    drop_top AS (DELETE FROM attempt_cost_top WHERE minute < $4)
    UPDATE stats_rollup SET rolled_from = $4, rolled_until = $2 WHERE id = 1`,
});
