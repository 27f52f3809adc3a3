import { prepareAll, type SqliteDb } from '../connection.js';
import { mayRank } from '../../rollup.js';

/**
 * The rollup's writes (../../rollup.ts): each takes a batch's rows as one JSON array of objects (the rows
 * rollupOf makes), so that a batch is one statement per table whatever its size.
 */
export const ROLLUP_SQL = {
  /** (rows) adds terminal jobs to their buckets. */
  addJobs: `INSERT INTO job_rollup (bucket, class, status, runs, jobs)
    SELECT value ->> 'bucket', value ->> 'class', value ->> 'status', value ->> 'runs', value ->> 'jobs' FROM json_each(@rows) WHERE true
    ON CONFLICT (bucket, class, status, runs) DO UPDATE SET jobs = jobs + excluded.jobs`,
  /** (rows) adds ended attempts and their cost to their buckets. */
  addAttempts: `INSERT INTO attempt_rollup (bucket, class, code, ended, measured, cpu_ms, max_peak_rss_bytes, last_at)
    SELECT value ->> 'bucket', value ->> 'class', value ->> 'code', value ->> 'ended', value ->> 'measured', value ->> 'cpu_ms',
      value ->> 'max_peak_rss_bytes', value ->> 'last_at' FROM json_each(@rows) WHERE true
    ON CONFLICT (bucket, class, code) DO UPDATE SET ended = ended + excluded.ended, measured = measured + excluded.measured,
      cpu_ms = cpu_ms + excluded.cpu_ms, max_peak_rss_bytes = max(max_peak_rss_bytes, excluded.max_peak_rss_bytes),
      last_at = max(last_at, excluded.last_at)`,
  /** (rows) keeps the candidates that their bucket's kept attempts do not already outrank, by CPU or by peak RSS. */
  addTop: `WITH c AS MATERIALIZED (
      SELECT value ->> 'bucket' AS bucket, value ->> 'job_id' AS job_id, value ->> 'attempt' AS attempt, value ->> 'class' AS class,
        value ->> 'status' AS status, value ->> 'cpu_ms' AS cpu_ms, value ->> 'peak_rss_bytes' AS peak_rss_bytes,
        value ->> 'finished_at' AS finished_at FROM json_each(@rows))
    INSERT INTO cost_top (bucket, job_id, attempt, class, status, cpu_ms, peak_rss_bytes, finished_at)
    SELECT c.* FROM c
    WHERE ${mayRank('cpu_ms', 'c.bucket')} OR ${mayRank('peak_rss_bytes', 'c.bucket')}
    ON CONFLICT (job_id, attempt) DO NOTHING`,
  /** (before) deletes the buckets older than any window reads (retention). */
  pruneJobs: `DELETE FROM job_rollup WHERE bucket < @before`,
  pruneAttempts: `DELETE FROM attempt_rollup WHERE bucket < @before`,
  pruneTop: `DELETE FROM cost_top WHERE bucket < @before`,
};

export const prepareRollupStatements = (db: SqliteDb) => prepareAll(db, ROLLUP_SQL);

export type RollupStatements = ReturnType<typeof prepareRollupStatements>;
