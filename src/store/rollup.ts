/**
 * The per-bucket rollup of finished jobs and ended attempts (migration 10):
 * what the operator's windowed reads (`stats`, the dashboard, /metrics) add
 * up instead of reading one row per job. Written with the outcome batch, one
 * upsert per table per batch; decided here, without a database.
 */
import type { HeldFacts, OutcomePlan } from './outcomes.js';

/** A bucket's span: a window's edge reads at most this much of raw rows (1,000 jobs at 100 jobs/s). */
export const ROLLUP_BUCKET_MS = 10_000;
/** Each bucket keeps at least its this many costliest attempts by CPU and by peak RSS: rankings up to this long are exact. */
export const COST_TOP_KEPT = 10;
/** The longest window the rollup answers (`stats` reads 24 h); older parts of a window read the raw rows. */
export const ROLLUP_KEPT_MS = 24 * 3_600_000;
/** Retention deletes buckets this much older still: a host whose clock is ahead never deletes what another reads. */
export const ROLLUP_PRUNE_MARGIN_MS = 3_600_000;
/** The end of a window that has none (every row is in the rollup the moment it commits). */
const OPEN = Number.MAX_SAFE_INTEGER;

/** Terminal jobs of one bucket, class, status and runs (attempts less handed-back claims). */
export interface JobRollupRow {
  bucket: number;
  class: string;
  status: 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  runs: number;
  jobs: number;
}

/** Attempts that ended in one bucket, of one class, with one error code ('' for none): how many, and the measured ones' cost. */
export interface AttemptRollupRow {
  bucket: number;
  class: string;
  code: string;
  ended: number;
  measured: number;
  cpu_ms: number;
  max_peak_rss_bytes: number;
  last_at: number;
}

/** A measured attempt that may rank among its bucket's costliest (cost_top). */
export interface CostTopRow {
  bucket: number;
  job_id: number;
  attempt: number;
  class: string;
  status: string;
  cpu_ms: number;
  peak_rss_bytes: number;
  finished_at: number;
}

export interface RollupRows {
  jobs: JobRollupRow[];
  attempts: AttemptRollupRow[];
  top: CostTopRow[];
}

/** An outcome with the facts of its job that the rollup keys on. */
export interface RolledOutcome {
  plan: OutcomePlan;
  facts: Pick<HeldFacts, 'class' | 'attempts' | 'releases'>;
}

export const bucketOf = (ts: number) => Math.floor(ts / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS;

/** Keeps, of `rows`, the `count` first by `key` descending (ties: job id, attempt), as the rankings order them. */
function firstBy(rows: CostTopRow[], key: 'cpu_ms' | 'peak_rss_bytes', count: number): CostTopRow[] {
  return [...rows].sort((a, b) => b[key] - a[key] || a.job_id - b.job_id || a.attempt - b.attempt).slice(0, count);
}

/**
 * What a batch of outcomes, all written at `now`, adds to the rollup: each
 * terminal job, each ended attempt, and the batch's own costliest attempts
 * (the statement keeps those its bucket does not already outrank).
 */
export function rollupOf(outcomes: readonly RolledOutcome[], now: number): RollupRows {
  const bucket = bucketOf(now);
  const jobs = new Map<string, JobRollupRow>();
  const attempts = new Map<string, AttemptRollupRow>();
  const measured: CostTopRow[] = [];
  for (const { plan, facts } of outcomes) {
    if (plan.status !== 'QUEUED') {
      const runs = facts.attempts - facts.releases;
      const key = `${facts.class}\0${plan.status}\0${runs}`;
      const row = jobs.get(key) ?? { bucket, class: facts.class, status: plan.status, runs, jobs: 0 };
      row.jobs += 1;
      jobs.set(key, row);
    }
    const end = plan.attemptEnd;
    const code = end.code ?? '';
    const key = `${facts.class}\0${code}`;
    const row = attempts.get(key) ?? { bucket, class: facts.class, code, ended: 0, measured: 0, cpu_ms: 0, max_peak_rss_bytes: 0, last_at: now };
    row.ended += 1;
    if (end.cpuMs !== null) {
      const rss = end.peakRssBytes ?? 0;
      row.measured += 1;
      row.cpu_ms += end.cpuMs;
      row.max_peak_rss_bytes = Math.max(row.max_peak_rss_bytes, rss);
      measured.push({ bucket, job_id: plan.id, attempt: plan.attempt, class: facts.class, status: end.status, cpu_ms: end.cpuMs, peak_rss_bytes: rss, finished_at: now });
    }
    attempts.set(key, row);
  }
  const top = new Set([...firstBy(measured, 'cpu_ms', COST_TOP_KEPT), ...firstBy(measured, 'peak_rss_bytes', COST_TOP_KEPT)]);
  return { jobs: [...jobs.values()], attempts: [...attempts.values()], top: [...top] };
}

/**
 * How a window [since, until) is read: the raw rows of [since, from) and of
 * [to, until), and the rollup's whole buckets of [from, to). The rollup
 * answers only what it still keeps; `exact` false (a ranking longer than
 * cost_top keeps) reads the whole window raw.
 */
export interface WindowBounds {
  since: number;
  from: number;
  to: number;
  until: number;
}

export function windowBounds(window: { since: number; until?: number }, now: number, rollup = true): WindowBounds {
  const until = window.until ?? OPEN;
  if (!rollup) return { since: window.since, from: window.since, to: window.since, until };
  const from = Math.min(Math.ceil(Math.max(window.since, now - ROLLUP_KEPT_MS) / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS, until);
  const to = window.until === undefined ? OPEN : Math.max(from, bucketOf(until));
  return { since: window.since, from, to, until };
}

/** A window's raw edges as a driver binds them: one raw select for [lo, hi) given its bounds, for each edge (UNION ALL). */
export type WindowEdges = (edge: (lo: string, hi: string) => string) => string;

/**
 * Both drivers' CTE `errors(class, code, count, last_at)`: per class and error code, the attempts of a window that
 * ended with a real error (handed-back claims are not), the edges' through job_attempts_error and the buckets'.
 * `rolled`: the driver's condition on the buckets of the window.
 */
export const errorsCte = (edges: WindowEdges, rolled: string) => `errors(class, code, count, last_at) AS (${edges(
  (lo, hi) => `SELECT j.class, a.error_code, count(*), max(a.finished_at) FROM job_attempts AS a JOIN jobs AS j ON j.id = a.job_id
      WHERE a.error_code IS NOT NULL AND a.error_code <> 'LEASE:RELEASED' AND a.finished_at >= ${lo} AND a.finished_at < ${hi} GROUP BY j.class, a.error_code`,
)}
      UNION ALL SELECT class, code, sum(ended), max(last_at) FROM attempt_rollup WHERE ${rolled} AND code NOT IN ('', 'LEASE:RELEASED')
      GROUP BY class, code)`;

/**
 * Both drivers' test of a cost_top candidate `c` (its bucket, job_id, attempt and `column`): true when fewer than
 * COST_TOP_KEPT kept rows of its bucket precede it in the rankings' order (most first, then job id, attempt). A
 * candidate it turns away can never rank there, as the rows that precede it stay; a tie does not let it in, which
 * would keep a row per job where a child's peak RSS repeats from job to job. The `>=` bounds the walk of the
 * (bucket, column) index to the rows at or above the candidate's figure.
 */
export const mayRank = (column: string, bucket: string) => `(SELECT count(*) FROM (SELECT 1 FROM cost_top AS t WHERE t.bucket = ${bucket} AND t.${column} >= c.${column}
        AND (t.${column} > c.${column} OR t.job_id < c.job_id OR (t.job_id = c.job_id AND t.attempt < c.attempt))
        LIMIT ${COST_TOP_KEPT}) AS preceding) < ${COST_TOP_KEPT}`;
