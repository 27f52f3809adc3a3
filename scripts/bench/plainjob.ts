/**
 * Section 2: the same workload through plainjob (a SQLite job queue on
 * better-sqlite3): the queue filled with its addMany, then N worker
 * processes running its own worker loop; SUCCEEDED counted as leasehold's.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { better, defineQueue, JobStatus, type Logger } from 'plainjob';
import { pollDrain, steadyRate } from './common.js';
import type { BenchContext } from './context.js';
import { SqliteCounter } from './database.js';
import type { Managed } from './processes.js';
import { POLL_MS, type DrainRun } from './throughput.js';

const WORKER = fileURLToPath(new URL('./plainjob-worker.js', import.meta.url));
const silent: Logger = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} };

export async function plainjobDrain(ctx: BenchContext, processes: number): Promise<DrainRun> {
  const jobs = ctx.sizes.jobs;
  const dir = ctx.dirs.make(`plainjob-p${processes}`);
  const database = join(dir, 'plainjob.db');
  const queue = defineQueue({ connection: better(new Database(database)), logger: silent });
  for (let done = 0; done < jobs; done += 10_000) {
    const size = Math.min(10_000, jobs - done);
    queue.addMany('bench', Array.from({ length: size }, (_, i) => ({ n: done + i })));
  }
  queue.close();

  const counter = new SqliteCounter(database);
  const started = performance.now();
  const workers: Managed[] = [];
  try {
    for (let i = 0; i < processes; i++) workers.push(ctx.processes.startNode(`plainjob-${i}`, WORKER, [database], { output: join(dir, `worker-${i}.out`) }));
    const timing = await pollDrain(counter.count('SELECT count(*) FROM plainjob_jobs WHERE status = ?', JobStatus.Done), jobs, {
      intervalMs: POLL_MS.sqlite,
      timeoutMs: ctx.sizes.drainTimeoutMs,
      alive: () => (workers.some((w) => !w.running) ? `a plainjob worker exited early; see ${dir}` : undefined),
    });
    return { jobsPerSec: steadyRate(timing, jobs), jobsPerSecFromStart: jobs / ((timing.endMs - started) / 1000) };
  } finally {
    await counter.close();
    await Promise.all(workers.map((w) => w.stop(5_000)));
  }
}
