/**
 * The graphile-worker peer beside section 9: its schema in a schema of the
 * bench's own on the PostgreSQL server (dropped after), filled with addJobs
 * and drained by graphile-worker's pool in GRAPHILE_PROCESSES processes
 * (graphile-worker.ts).
 */
import { Logger, makeWorkerUtils, runMigrations } from 'graphile-worker';
import { fileURLToPath } from 'node:url';
import { parsePostgresUrl } from '../../dist/src/store/postgres/connection.js';
import type { BenchContext } from './context.js';
import { benchDatabase } from './database.js';
import { drainByWorkers, POLL_MS, withServerCpu, type DrainRun } from './drain.js';
import { inChunks } from './leasehold.js';

const WORKER = fileURLToPath(new URL('./graphile-worker.js', import.meta.url));
export const GRAPHILE_PROCESSES = 2;
export const GRAPHILE_CONCURRENCY = 10;
/** Jobs a process fetches and locks at once in local-queue mode (its performance page's figure). */
export const LOCAL_QUEUE_SIZE = 500;

/** local-queue-1: the local queue in one process, the pool issue 53 holds 1 supervisor × 2 children against. */
export type GraphileMode = 'plain' | 'local-queue' | 'local-queue-1';
export const GRAPHILE_MODES: GraphileMode[] = ['plain', 'local-queue', 'local-queue-1'];
export const graphileProcesses = (mode: GraphileMode) => (mode === 'local-queue-1' ? 1 : GRAPHILE_PROCESSES);

const quiet = new Logger(() => () => {});

/** `ctx.sizes.jobs` no-op jobs through graphile-worker; CPU: its worker processes, and the server's over the whole run. */
export async function graphileDrain(ctx: BenchContext, mode: GraphileMode): Promise<DrainRun> {
  const jobs = ctx.sizes.jobs;
  const dir = ctx.dirs.make(`graphile-${mode}`);
  const database = benchDatabase(ctx, dir, 'postgres');
  const schema = parsePostgresUrl(database.url).schema;
  if (schema === null) throw new Error(`no schema in ${database.url}`);
  try {
    const options = { connectionString: ctx.pgUrl, schema, logger: quiet };
    await runMigrations(options);
    return await withServerCpu(jobs, async () => {
      const utils = await makeWorkerUtils(options);
      try {
        await inChunks(jobs, (ns) => utils.addJobs(ns.map((n) => ({ identifier: 'bench', payload: { n } }))));
      } finally {
        await utils.release();
      }
      const counter = await database.counter();
      // It deletes a job once done: what is left in its table is not done.
      const left = counter.count('SELECT count(*) FROM _private_jobs');
      return await drainByWorkers(ctx, {
        name: `graphile-${mode}`,
        script: WORKER,
        args: [ctx.pgUrl, schema, String(GRAPHILE_CONCURRENCY), String(mode === 'plain' ? 0 : LOCAL_QUEUE_SIZE)],
        processes: graphileProcesses(mode),
        jobs,
        dir,
        pollMs: POLL_MS.postgres,
        counter,
        countDone: async () => jobs - (await left()),
        exitWhenEmpty: false,
      });
    });
  } finally {
    await database.dispose();
  }
}
