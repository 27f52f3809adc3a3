/**
 * npm run bench:store — the store's own speed on SQLite, in one process:
 * throughput step by step (claim, start, complete: a call each) and on the
 * child's hot path (a batch's outcomes with the next claim, one transaction),
 * bulk enqueue, and claim latency with 1e3 and 1e6 jobs queued. Prints one
 * JSON document.
 *
 *   npm run bench:store -- [--deep 1000000] [--jobs 20000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { systemClock } from '../../dist/src/clock.js';
import { Queue } from '../../dist/src/queue/queue.js';
import { SqliteStore } from '../../dist/src/store/sqlite/store.js';
import { percentiles } from '../../dist/scripts/stats.js';
import { benchClaim, claim, complete } from './store-ops.js';

const { values } = parseArgs({
  options: {
    deep: { type: 'string', default: '1000000' },
    jobs: { type: 'string', default: '20000' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write('usage: npm run bench:store -- [--deep 1000000] [--jobs 20000]\n');
  process.exit(0);
}
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

/** Drain `count` jobs one call per step: claim `batch`, then start and complete each (three transactions a job at batch 1). */
async function drainStepByStep(queue: Queue, count: number, batch: number): Promise<number> {
  const { store } = queue;
  const started = performance.now();
  let done = 0;
  while (done < count) {
    const jobs = await claim(store, { classes: ['bench'], ownerId: 'bench-worker', limit: batch, leaseMs: LEASE_MS });
    if (jobs.length === 0) throw new Error(`queue ran dry after ${done} of ${count}`);
    for (const job of jobs) {
      await store.jobStart({ id: job.id, leaseToken: job.leaseToken, leaseMs: LEASE_MS, claim: job });
      await complete(store, job);
    }
    done += jobs.length;
  }
  return count / ((performance.now() - started) / 1000);
}

/**
 * Drain `count` jobs the way a child does: the outcomes of a batch are
 * written together with the next claim, one transaction per batch, starts
 * stamped with the outcomes.
 */
async function drainHotPath(queue: Queue, count: number, batch: number): Promise<number> {
  const { store } = queue;
  const request = benchClaim({ classes: ['bench'], ownerId: 'bench-worker', limit: batch, leaseMs: LEASE_MS });
  const started = performance.now();
  let jobs = await claim(store, request);
  let done = 0;
  while (done < count) {
    if (jobs.length === 0) throw new Error(`queue ran dry after ${done} of ${count}`);
    const settlements = jobs.map((job) => ({
      id: job.id,
      leaseToken: job.leaseToken,
      startedAt: Date.now(),
      verdict: { type: 'complete' as const, result: null },
      claim: job,
    }));
    done += jobs.length;
    jobs = (await store.jobsSettle({ settlements, claim: done < count ? request : undefined })).claimed;
  }
  return count / ((performance.now() - started) / 1000);
}

/** Time single claims (then complete, off the clock) against a queue of `depth` jobs. */
async function claimLatency(queue: Queue, samples: number) {
  const { store } = queue;
  const timings: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const [job] = await claim(store, { classes: ['bench'], ownerId: 'bench-worker', limit: 1, leaseMs: LEASE_MS });
    timings.push(performance.now() - started);
    if (job === undefined) throw new Error('queue ran dry');
    await complete(store, job);
  }
  return percentiles(timings);
}

const round = (n: number) => Math.round(n);

try {
  const throughput = await freshQueue('throughput');
  const bulkEnqueuePerSec = await fill(throughput, JOBS * 4);
  const stepByStep = {
    batch_1: round(await drainStepByStep(throughput, JOBS, 1)),
    batch_10: round(await drainStepByStep(throughput, JOBS, 10)),
  };
  const hotPath = {
    batch_1: round(await drainHotPath(throughput, JOBS, 1)),
    batch_16: round(await drainHotPath(throughput, JOBS, 16)),
  };
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
        loadavg: loadavg(),
        // claim, start and complete, each its own call and transaction
        claim_start_complete_jobs_per_sec: stepByStep,
        // the child's path: a batch's outcomes and the next claim in one transaction
        settle_and_claim_jobs_per_sec: hotPath,
        bulk_enqueue_jobs_per_sec: round(bulkEnqueuePerSec),
        claim_latency_ms: {
          depth_1e3: shallowLatency,
          [`depth_${DEEP.toExponential().replace('+', '')}`]: deepLatency,
        },
        deep_over_shallow_p50: Number((deepLatency.p50 / shallowLatency.p50).toFixed(2)),
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
