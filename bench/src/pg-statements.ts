/**
 * Section 23: where the PostgreSQL server's time goes, per job (issue 53).
 * pg_stat_statements is reset, section 9's workload runs once (a bulk
 * enqueue, then a drain through supervise, 2 children, claim_batch 64),
 * and each statement's calls, rows, execution time and WAL bytes are read
 * and divided by the jobs. With `pg_stat_statements.track = all` the
 * statements run inside leasehold's functions are listed too (`toplevel`
 * false), and their time is also inside their caller's.
 */
import pg from 'pg';
import type { BenchContext } from './context.js';
import { leaseholdDrain } from './throughput.js';

const CHILDREN = 2;
const CLAIM_BATCH = 64;
/** The statements listed: the most time first. */
const TOP = 25;

export interface StatementRow {
  query: string;
  toplevel: boolean;
  calls_per_job: number;
  rows_per_job: number;
  /** Execution time per job, µs (planning not included). */
  exec_us_per_job: number;
  mean_exec_ms: number;
  /** Of the top-level statements' execution time, this one's share (nested ones: of the same total). */
  share_of_toplevel: number;
  wal_bytes_per_job: number;
}

export interface PgStatementsSection {
  method: string;
  jobs: number;
  track: string;
  /** The top-level statements' execution time per job, µs, and their WAL bytes per job. */
  toplevel_exec_us_per_job: number;
  toplevel_wal_bytes_per_job: number;
  /** The server's CPU per job over the same drain (from its mark, see section 1), ms per 1k jobs. */
  server_cpu_ms_per_1k: number | undefined;
  statements: StatementRow[];
}

interface StatementStats {
  query: string;
  toplevel: boolean;
  calls: string;
  rows: string;
  total_exec_time: number;
  mean_exec_time: number;
  wal_bytes: string;
}

const NOT_LOADED =
  "pg_stat_statements is not loaded: run ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements', " +
  "ALTER SYSTEM SET pg_stat_statements.track = 'all', and restart the server";

async function withAdmin<T>(ctx: BenchContext, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ctx.pgUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Make sure the extension is there and reset its counts; say how to load it when it is not. */
async function reset(ctx: BenchContext): Promise<string> {
  return withAdmin(ctx, async (client) => {
    const { rows } = await client.query<{ loaded: boolean }>(
      `SELECT 'pg_stat_statements' = ANY (string_to_array(current_setting('shared_preload_libraries'), ', ')) AS loaded`,
    );
    if (!rows[0]!.loaded) throw new Error(NOT_LOADED);
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT pg_stat_statements_reset()');
    return (await client.query<{ track: string }>(`SELECT current_setting('pg_stat_statements.track') AS track`))
      .rows[0]!.track;
  });
}

const oneLine = (query: string) => query.replace(/\s+/g, ' ').trim().slice(0, 160);

export async function runPgStatements(ctx: BenchContext): Promise<PgStatementsSection> {
  const track = await reset(ctx);
  const jobs = ctx.sizes.jobs;
  ctx.progress(`pg-statements: ${jobs} jobs, ${CHILDREN} children`);
  const run = await leaseholdDrain(ctx, CHILDREN, CLAIM_BATCH, 'postgres');
  const stats = await withAdmin(ctx, async (client) =>
    (
      await client.query<StatementStats>(
        `SELECT query, toplevel, calls, rows, total_exec_time, mean_exec_time, wal_bytes
           FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      )
    ).rows.filter((row) => !row.query.includes('pg_stat_statements')),
  );
  const toplevel = stats.filter((row) => row.toplevel);
  const toplevelMs = toplevel.reduce((sum, row) => sum + row.total_exec_time, 0);
  const perJob = (value: string | number) => Number(value) / jobs;
  return {
    method:
      `pg_stat_statements reset, then section 9's workload once: ${jobs} no-op jobs enqueued in bulk and drained through supervise ` +
      `(${CHILDREN} children, claim_batch ${CLAIM_BATCH}); each statement's calls, rows, execution time (planning not included) and WAL bytes per job`,
    jobs,
    track,
    toplevel_exec_us_per_job: (toplevelMs * 1000) / jobs,
    toplevel_wal_bytes_per_job: perJob(toplevel.reduce((sum, row) => sum + Number(row.wal_bytes), 0)),
    server_cpu_ms_per_1k: run.serverCpuMsPer1k,
    statements: stats
      .sort((a, b) => b.total_exec_time - a.total_exec_time)
      .slice(0, TOP)
      .map((row) => ({
        query: oneLine(row.query),
        toplevel: row.toplevel,
        calls_per_job: perJob(row.calls),
        rows_per_job: perJob(row.rows),
        exec_us_per_job: (row.total_exec_time * 1000) / jobs,
        mean_exec_ms: row.mean_exec_time,
        share_of_toplevel: toplevelMs > 0 ? row.total_exec_time / toplevelMs : 0,
        wal_bytes_per_job: perJob(row.wal_bytes),
      })),
  };
}
