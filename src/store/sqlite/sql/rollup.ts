import { prepareAll, type SqliteDb } from '../connection.js';
import { RUNS } from './jobs.js';
import { measuredIn } from './stats.js';

const MINUTE = `finished_at / 60000 * 60000`;

/**
 * The stats rollup's writes (../../stats-window.ts): one roll-up sums the
 * minutes [@from, @until) from the jobs, with the statements the reads use
 * for the same rows, then drops the minutes before @keepFrom.
 */
export const ROLLUP_SQL = {
  /** () -> the minutes the rollup covers (null on a new store). */
  state: `SELECT rolled_from AS "from", rolled_until AS until FROM stats_rollup WHERE id = 1`,
  /** (from, until) -> the minutes' finished jobs by class, status and attempts spent (handed-back claims not counted). */
  addJobEnds: `INSERT INTO job_end_minutes (minute, class, status, spent, jobs)
    SELECT ${MINUTE}, class, status, ${RUNS}, count(*) FROM jobs INDEXED BY jobs_finished
    WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at >= @from AND finished_at < @until
    GROUP BY 1, 2, 3, 4`,
  /** (from, until) -> the minutes' measured attempts by class: how many, their CPU, their highest peak RSS. */
  addCost: `WITH measured AS (${measuredIn('@from', '@until')})
    INSERT INTO attempt_cost_minutes (minute, class, attempts, cpu_ms, max_peak_rss_bytes)
    SELECT ${MINUTE}, class, count(*), sum(cpu_ms), max(peak_rss_bytes) FROM measured GROUP BY 1, 2`,
  /** (from, until, kept) -> each minute's `kept` attempts with the most CPU and the most memory, ordered as the rankings read them. */
  addCostTop: `WITH measured AS (${measuredIn('@from', '@until')}),
    ranked AS (SELECT *, row_number() OVER (PARTITION BY ${MINUTE} ORDER BY cpu_ms DESC, job_id, attempt) AS by_cpu,
        row_number() OVER (PARTITION BY ${MINUTE} ORDER BY peak_rss_bytes DESC, job_id, attempt) AS by_rss FROM measured)
    INSERT INTO attempt_cost_top (minute, job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at)
    SELECT ${MINUTE}, job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at FROM ranked WHERE by_cpu <= @kept OR by_rss <= @kept`,
  /** (keepFrom) -> drop the minutes before it. */
  dropJobEnds: `DELETE FROM job_end_minutes WHERE minute < @keepFrom`,
  dropCost: `DELETE FROM attempt_cost_minutes WHERE minute < @keepFrom`,
  dropCostTop: `DELETE FROM attempt_cost_top WHERE minute < @keepFrom`,
  /** (keepFrom, until) -> the minutes now covered. */
  save: `UPDATE stats_rollup SET rolled_from = @keepFrom, rolled_until = @until WHERE id = 1`,
};

export const prepareRollupStatements = (db: SqliteDb) => prepareAll(db, ROLLUP_SQL);

export type RollupStatements = ReturnType<typeof prepareRollupStatements>;
