/**
 * npm run bench:store — the store's own speed on SQLite, in one process:
 * claim+start+complete throughput (one job per claim and ten), bulk enqueue,
 * and claim latency with 1e3 and 1e6 jobs queued. Prints one JSON document.
 *
 *   npm run bench:store -- [--deep 1000000] [--jobs 20000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { systemClock } from '../src/clock.js';
import { Queue } from '../src/queue/queue.js';
import { SqliteStore } from '../src/store/sqlite/store.js';
import { percentiles } from './stats.js';

const { values } = parseArgs({
  options: { deep: { type: 'string', default: '1000000' }, jobs: { type: 'string', default: '20000' } },
});
const DEEP = Number(values.deep);
const JOBS = Number(values.jobs);
const LEASE_MS = 30_000;
const BULK_CHUNK = 10_000;

const workDir = mkdtempSync(join(tmpdir(), 'leasehold-bench-'));

async function freshQueue(name: string): Promise<Queue> {
  const store = await SqliteStore.open({ path: join(workDir, `${name}.db`), clock: systemClock });
  return new Queue(store, { actor: 'bench' });
}

async function fill(queue: Queue, count: number, jobClass = 'bench'): Promise<number> {
  const started = performance.now();
  for (let done = 0; done < count; done += BULK_CHUNK) {
    const size = Math.min(BULK_CHUNK, count - done);
    await queue.enqueueMany(Array.from({ length: size }, (_, i) => ({ class: jobClass, payload: { n: done + i } })));
  }
  return count / ((performance.now() - started) / 1000);
}

/** Drain `count` jobs: claim `batch` per transaction, then start and complete each (the worker's real path). */
async function drain(queue: Queue, count: number, batch: number): Promise<number> {
  const { store } = queue;
  const started = performance.now();
  let done = 0;
  while (done < count) {
    const jobs = await store.jobClaim({ classes: ['bench'], ownerId: 'bench-worker', limit: batch, leaseMs: LEASE_MS });
    if (jobs.length === 0) throw new Error(`queue ran dry after ${done} of ${count}`);
    for (const job of jobs) {
      await store.jobStart({ id: job.id, leaseToken: job.leaseToken, leaseMs: LEASE_MS });
      await store.jobCompleteIfHeld({ id: job.id, leaseToken: job.leaseToken, result: null });
    }
    done += jobs.length;
  }
  return count / ((performance.now() - started) / 1000);
}

/** Time single claims (then complete, off the clock) against a queue of `depth` jobs. */
async function claimLatency(queue: Queue, samples: number) {
  const { store } = queue;
  const timings: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const [job] = await store.jobClaim({ classes: ['bench'], ownerId: 'bench-worker', limit: 1, leaseMs: LEASE_MS });
    timings.push(performance.now() - started);
    if (job === undefined) throw new Error('queue ran dry');
    await store.jobCompleteIfHeld({ id: job.id, leaseToken: job.leaseToken, result: null });
  }
  return percentiles(timings);
}

const round = (n: number) => Math.round(n);

try {
  const throughput = await freshQueue('throughput');
  const bulkEnqueuePerSec = await fill(throughput, JOBS * 2);
  const claimOnePerSec = await drain(throughput, JOBS, 1);
  const claimTenPerSec = await drain(throughput, JOBS, 10);
  await throughput.close();

  const shallow = await freshQueue('shallow');
  await fill(shallow, 1_000 + 1_000);
  const shallowLatency = await claimLatency(shallow, 1_000);
  await shallow.close();

  const deep = await freshQueue('deep');
  await fill(deep, DEEP + 1_000);
  const deepLatency = await claimLatency(deep, 1_000);
  await deep.close();

  console.log(
    JSON.stringify(
      {
        bench: 'store',
        driver: 'sqlite',
        node: process.version,
        jobs: JOBS,
        claim_complete_jobs_per_sec: { batch_1: round(claimOnePerSec), batch_10: round(claimTenPerSec) },
        bulk_enqueue_jobs_per_sec: round(bulkEnqueuePerSec),
        claim_latency_ms: { depth_1e3: shallowLatency, [`depth_${DEEP.toExponential().replace('+', '')}`]: deepLatency },
        deep_over_shallow_p50: Number((deepLatency.p50 / shallowLatency.p50).toFixed(2)),
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
