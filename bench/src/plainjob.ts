/** Section 2: the same workload through plainjob, filled with its addMany and drained by its own worker loop (plainjob-worker.ts). */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { better, defineQueue, JobStatus, type Logger } from 'plainjob';
import type { BenchContext } from './context.js';
import { SqliteCounter } from './database.js';
import { drainByWorkers, POLL_MS, type DrainRun } from './drain.js';
import { inChunks } from './leasehold.js';

const WORKER = fileURLToPath(new URL('./plainjob-worker.js', import.meta.url));
const silent: Logger = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} };

export async function plainjobDrain(
  ctx: BenchContext,
  processes: number,
  jobs = ctx.sizes.jobs,
  markAt?: number,
): Promise<DrainRun> {
  const dir = ctx.dirs.make(`plainjob-p${processes}`);
  const database = join(dir, 'plainjob.db');
  const queue = defineQueue({ connection: better(new Database(database)), logger: silent });
  await inChunks(jobs, (ns) =>
    queue.addMany(
      'bench',
      ns.map((n) => ({ n })),
    ),
  );
  queue.close();
  const counter = new SqliteCounter(database);
  const countDone = counter.count('SELECT count(*) FROM plainjob_jobs WHERE status = ?', JobStatus.Done);
  return drainByWorkers(ctx, {
    name: 'plainjob',
    script: WORKER,
    args: [database],
    processes,
    jobs,
    dir,
    pollMs: POLL_MS.sqlite,
    counter,
    countDone,
    exitWhenEmpty: false,
    markAt,
  });
}
