/** The big stores of sections 13 and 15: a month (or week) of finished jobs written in bulk, as docs/performance.md describes them. */
import Database from 'better-sqlite3';
import pg from 'pg';
import { systemClock } from '../../dist/src/clock.js';
import { openStore } from '../../dist/src/store/open.js';
import type { Store } from '../../dist/src/store/types.js';
import { round, summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { benchDatabase, type BenchDatabase, type Driver } from './database.js';
import { FILL_CHUNK, openBenchQueue } from './leasehold.js';

export interface BigStoreMix {
  jobs: number;
  classes: readonly string[];
  spreadMs: number;
  queuedEvery: number;
  timeline: boolean;
  /** 0: no keys. */
  keyEvery: number;
}

export const ERROR_CODES = 5;

/** Ends the jobs as the mix says: status, times, owner, attempt row (and the timeline, keys). */
function finishSql(now: number, mix: BigStoreMix): string[] {
  const finishedAt = `${now} - (${mix.jobs} - id) * ${Math.floor(mix.spreadMs / mix.jobs)}`;
  const status = `CASE WHEN id % 100 = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END`;
  const code = `CASE WHEN id % 100 = 0 THEN 'E:' || (id / 100 % ${ERROR_CODES}) END`;
  const statements = [
    `UPDATE jobs SET status = ${status}, attempts = 1, owner_id = 'bench', lease_token = 'bench', claimed_at = ${finishedAt} - 10,
       started_at = ${finishedAt} - 10, finished_at = ${finishedAt}, error_code = ${code} WHERE id % ${mix.queuedEvery} <> 1`,
    `INSERT INTO job_attempts (job_id, attempt, owner_id, lease_token, started_at, finished_at, status, error_code, cpu_ms, peak_rss_bytes)
       SELECT id, 1, owner_id, lease_token, started_at, finished_at, status, error_code, (id % 997) * 0.25, (60 + id % 200) * 1048576
       FROM jobs WHERE finished_at IS NOT NULL`,
  ];
  if (mix.timeline) {
    statements.push(
      `INSERT INTO job_events (job_id, ts, event, actor, detail)
         SELECT id, started_at, 'STARTED', 'worker', '{"attempt":1,"owner_id":"bench","claimed_at":' || claimed_at || '}' FROM jobs WHERE finished_at IS NOT NULL`,
      `INSERT INTO job_events (job_id, ts, event, actor, detail)
         SELECT id, finished_at, status, 'worker', '{"attempt":1}' FROM jobs WHERE finished_at IS NOT NULL`,
    );
  }
  if (mix.keyEvery > 0)
    statements.push(`UPDATE jobs SET idempotency_key = 'key-' || id WHERE id % ${mix.keyEvery} = 0`);
  return statements;
}

/** Statements of this benchmark's own, in one transaction, on the measurement's database. */
async function runStatements(ctx: BenchContext, database: BenchDatabase, statements: string[]): Promise<void> {
  if (database.driver === 'sqlite') {
    const db = new Database(database.url);
    try {
      db.transaction(() => statements.forEach((sql) => db.exec(sql)))();
    } finally {
      db.close();
    }
    return;
  }
  const schema = new URL(database.url).searchParams.get('schema') ?? 'public';
  const client = new pg.Client({ connectionString: ctx.pgUrl, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    await client.query('BEGIN');
    for (const sql of statements) await client.query(sql);
    await client.query('COMMIT');
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}

/** A store filled with the mix, in a folder (SQLite) or schema (PostgreSQL) of its own; the caller disposes of it. */
async function fillBigStore(
  ctx: BenchContext,
  name: string,
  driver: Driver,
  mix: BigStoreMix,
): Promise<{ database: BenchDatabase; setupSeconds: number }> {
  const database = benchDatabase(ctx, ctx.dirs.make(`${name}-${driver}`), driver);
  try {
    const started = performance.now();
    const queue = await openBenchQueue(database.url);
    for (let done = 0; done < mix.jobs; done += FILL_CHUNK) {
      const size = Math.min(FILL_CHUNK, mix.jobs - done);
      await queue.enqueueMany(
        Array.from({ length: size }, (_, i) => ({
          class: mix.classes[(done + i) % mix.classes.length]!,
          payload: { n: done + i },
        })),
      );
    }
    await queue.close();
    await runStatements(ctx, database, finishSql(systemClock.now(), mix));
    const setupSeconds = round((performance.now() - started) / 1000, 1);
    ctx.progress(`${name} on ${driver}: ${mix.jobs} jobs set up in ${setupSeconds} s`);
    return { database, setupSeconds };
  } catch (error) {
    await database.dispose();
    throw error;
  }
}

/** Each driver in turn: a big store filled with the mix, measured through a store opened on it, then dropped. */
export async function onBigStores<T extends object>(
  ctx: BenchContext,
  name: string,
  drivers: Driver[],
  mix: BigStoreMix,
  measure: (store: Store, driver: Driver) => Promise<T>,
): Promise<({ driver: Driver; setup_seconds: number } & T)[]> {
  const results: ({ driver: Driver; setup_seconds: number } & T)[] = [];
  for (const driver of drivers) {
    const { database, setupSeconds } = await fillBigStore(ctx, name, driver, mix);
    try {
      const store = await openStore(database.url);
      try {
        results.push({ driver, setup_seconds: setupSeconds, ...(await measure(store, driver)) });
      } finally {
        await store.close();
      }
    } finally {
      await database.dispose();
    }
  }
  return results;
}

/** The slowest median over every driver's reads, but those timed cold (not held to a target). */
export function slowestMedian(drivers: { reads: { ms: Stat; cold?: boolean }[] }[] | undefined): number | undefined {
  const medians = drivers?.flatMap((d) => d.reads.filter((r) => r.cold !== true).map((r) => r.ms.median)) ?? [];
  return medians.length === 0 ? undefined : Math.max(...medians);
}

/** A read timed as the read sections time them: one call off the clock (its time is `first_ms`), then `runs` calls. */
export async function timeRead(run: () => Promise<unknown>, runs: number): Promise<{ first_ms: number; ms: Stat }> {
  let started = performance.now();
  await run();
  const first = performance.now() - started;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return { first_ms: round(first, 1), ms: summarize(times, 1) };
}
