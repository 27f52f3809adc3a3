import { prepareAll, type SqliteDb } from '../connection.js';
import { RUNS } from './jobs.js';
import { measuredIn } from './stats.js';

const MINUTE = `finished_at / 60000 * 60000`;
/** The rankings' order (stats.ts): a minute's costliest are kept in it. */
const BY_CPU = 'cpu_ms DESC, job_id, attempt';
const BY_RSS = 'peak_rss_bytes DESC, job_id, attempt';

/** The `kept` measured attempts of [@from, @until) first by `order`, into the minute's costliest (once each). */
const costTopOf = (order: string) => `WITH measured AS (${measuredIn('@from', '@until')})
    INSERT INTO attempt_cost_top (minute, job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at)
    SELECT ${MINUTE}, job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at FROM measured WHERE true
    ORDER BY ${order} LIMIT @kept
    ON CONFLICT (minute, job_id, attempt) DO NOTHING`;

/**
 * The stats rollup's writes (../../stats-window.ts): one roll-up sums the
 * time [@from, @until) from the jobs, with the statements the reads use for
 * the same rows, into the rows of its minutes (a minute summed in parts adds
 * each part to its rows), then drops the minutes before @keepFrom.
 */
export const ROLLUP_SQL = {
  /** () -> the time the rollup covers (null on a new store). */
  state: `SELECT rolled_from AS "from", rolled_until AS until FROM stats_rollup WHERE id = 1`,
  /** (from, until) -> 1 when a job finished in [from, until). */
  anyEnded: `SELECT 1 AS ended FROM jobs INDEXED BY jobs_finished
    WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at >= @from AND finished_at < @until LIMIT 1`,
  /** (from, until) -> when the first job finished in [from, until) (null: none), a seek per terminal status. */
  firstEnded: `SELECT min(at) AS at FROM (
    SELECT min(finished_at) AS at FROM jobs INDEXED BY jobs_finished
      WHERE status = 'SUCCEEDED' AND finished_at >= @from AND finished_at < @until
    UNION ALL SELECT min(finished_at) FROM jobs INDEXED BY jobs_finished
      WHERE status = 'FAILED' AND finished_at >= @from AND finished_at < @until
    UNION ALL SELECT min(finished_at) FROM jobs INDEXED BY jobs_finished
      WHERE status = 'CANCELLED' AND finished_at >= @from AND finished_at < @until)`,
  /** (from, until) -> add the finished jobs by minute, class, status and attempts spent (handed-back claims not counted). */
  addJobEnds: `INSERT INTO job_end_minutes (minute, class, status, spent, jobs)
    SELECT ${MINUTE}, class, status, ${RUNS}, count(*) FROM jobs INDEXED BY jobs_finished
    WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at >= @from AND finished_at < @until
    GROUP BY 1, 2, 3, 4
    ON CONFLICT (minute, class, status, spent) DO UPDATE SET jobs = jobs + excluded.jobs`,
  /** (from, until) -> add the measured attempts by minute and class: how many, their CPU, their highest peak RSS. */
  addCost: `WITH measured AS (${measuredIn('@from', '@until')})
    INSERT INTO attempt_cost_minutes (minute, class, attempts, cpu_ms, max_peak_rss_bytes)
    SELECT ${MINUTE}, class, count(*), sum(cpu_ms), max(peak_rss_bytes) FROM measured WHERE true GROUP BY 1, 2
    ON CONFLICT (minute, class) DO UPDATE SET attempts = attempts + excluded.attempts, cpu_ms = cpu_ms + excluded.cpu_ms,
      max_peak_rss_bytes = max(coalesce(max_peak_rss_bytes, excluded.max_peak_rss_bytes), coalesce(excluded.max_peak_rss_bytes, max_peak_rss_bytes))`,
  /**
   * (from, until, kept) -> of one minute's part [from, until), the `kept` attempts with the most CPU, then (below)
   * the most memory, ordered as the rankings read them: a top-N sort of each, not a sort of all.
   */
  addCostTopCpu: costTopOf(BY_CPU),
  addCostTopRss: costTopOf(BY_RSS),
  /**
   * (from, kept) -> the minute @from falls in keeps its `kept` costliest by CPU and by memory: a minute summed in
   * parts took each part's, and the minute's own are among them.
   */
  pruneCostTop: `DELETE FROM attempt_cost_top WHERE minute = @from / 60000 * 60000 AND (job_id, attempt) NOT IN (
      SELECT job_id, attempt FROM (SELECT job_id, attempt, row_number() OVER (ORDER BY ${BY_CPU}) AS by_cpu,
          row_number() OVER (ORDER BY ${BY_RSS}) AS by_rss
        FROM attempt_cost_top WHERE minute = @from / 60000 * 60000)
      WHERE by_cpu <= @kept OR by_rss <= @kept)`,
  /** (keepFrom) -> drop the minutes before it. */
  dropJobEnds: `DELETE FROM job_end_minutes WHERE minute < @keepFrom`,
  dropCost: `DELETE FROM attempt_cost_minutes WHERE minute < @keepFrom`,
  dropCostTop: `DELETE FROM attempt_cost_top WHERE minute < @keepFrom`,
  /** (keepFrom, until) -> the time now covered. */
  save: `UPDATE stats_rollup SET rolled_from = @keepFrom, rolled_until = @until WHERE id = 1`,
};

export const prepareRollupStatements = (db: SqliteDb) => prepareAll(db, ROLLUP_SQL);

export type RollupStatements = ReturnType<typeof prepareRollupStatements>;
