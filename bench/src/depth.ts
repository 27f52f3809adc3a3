/**
 * Section 7: the store alone, claim+complete at several depths and one
 * sweeper pass. The drained jobs are put back between rounds, off the
 * clock, so that each depth stays the depth it is named for.
 */
import { systemClock, type Clock } from '../../dist/src/clock.js';
import { Queue } from '../../dist/src/queue/queue.js';
import { SqliteStore } from '../../dist/src/store/sqlite/store.js';
import { recoverExpiredLeases } from '../../dist/src/queue/sweep.js';
import { round, summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { sqliteFile } from './database.js';
import { BENCH_CLASS, fillQueue, FILL_CHUNK } from './leasehold.js';
import { claim, complete } from './store-ops.js';

const LONG_LEASE_MS = 24 * 3600_000;
const SHORT_LEASE_MS = 1_000;
const SWEEP_BATCH = 100; // sweeper.batch_size default
const CLAIM_CHUNK = 1_000;

export interface DepthSection {
  method: string;
  measured_jobs: number;
  fill_chunk: number;
  depths: { depth: number; fill_seconds: number; fill_jobs_per_sec: number; claim_complete_jobs_per_sec: Stat }[];
  /** Rate at the deepest queue over the rate at the shallowest, per round. */
  deepest_over_shallowest: Stat;
  sweeper: {
    held: number;
    expired: number;
    batch_size: number;
    setup_seconds: number;
    pass_ms: Stat;
    recovered_per_pass: number;
  };
}

/** A clock the benchmark moves by hand, as tests do: SQL sees the same "now". */
class ManualClock implements Clock {
  constructor(public time: number) {}
  now(): number {
    return this.time;
  }
}

async function drain(store: SqliteStore, count: number): Promise<number> {
  const started = performance.now();
  for (let done = 0; done < count; done++) {
    const [job] = await claim(store, { classes: [BENCH_CLASS], ownerId: 'bench-depth', limit: 1, leaseMs: 30_000 });
    if (job === undefined) throw new Error(`queue ran dry after ${done} of ${count}`);
    await complete(store, job);
  }
  return count / ((performance.now() - started) / 1000);
}

async function claimMany(store: SqliteStore, count: number, leaseMs: number, ownerId: string): Promise<void> {
  for (let done = 0; done < count;) {
    const jobs = await claim(store, {
      classes: [BENCH_CLASS],
      ownerId,
      limit: Math.min(CLAIM_CHUNK, count - done),
      leaseMs,
    });
    if (jobs.length === 0) throw new Error(`only ${done} of ${count} jobs to claim`);
    done += jobs.length;
  }
}

async function sweeperPasses(ctx: BenchContext): Promise<DepthSection['sweeper']> {
  const { sizes } = ctx;
  const expired = Math.max(1, Math.round(sizes.sweepHeld * sizes.sweepExpiredShare));
  const dir = ctx.dirs.make('sweep');
  const setupStarted = performance.now();
  const filler = new Queue(await SqliteStore.open({ path: sqliteFile(dir), clock: systemClock }), { actor: 'bench' });
  await fillQueue(filler, sizes.sweepHeld);
  await filler.close();
  const clock = new ManualClock(Date.now() + 1_000);
  const store = await SqliteStore.open({ path: sqliteFile(dir), clock });
  try {
    await claimMany(store, sizes.sweepHeld - expired, LONG_LEASE_MS, 'bench-long');
    const setupSeconds = (performance.now() - setupStarted) / 1000;
    const passes: number[] = [];
    let recovered = 0;
    for (let run = 0; run < sizes.runs; run++) {
      ctx.progress(`sweeper pass ${run + 1}/${sizes.runs}: ${sizes.sweepHeld} held leases, ${expired} expired`);
      // The expired 1%: claimed with a short lease (again, after the previous pass put them back), then the clock moves past it.
      await claimMany(store, expired, SHORT_LEASE_MS, 'bench-short');
      clock.time += SHORT_LEASE_MS * 10;
      const started = performance.now();
      const back = await recoverExpiredLeases(store, {
        batchSize: SWEEP_BATCH,
        retryDelay: () => 0,
        actor: 'bench-sweeper',
      });
      passes.push(performance.now() - started);
      if (back.length !== expired) throw new Error(`sweep took back ${back.length} leases, expected ${expired}`);
      recovered = back.length;
    }
    return {
      held: sizes.sweepHeld,
      expired,
      batch_size: SWEEP_BATCH,
      setup_seconds: round(setupSeconds, 1),
      pass_ms: summarize(passes, 1),
      recovered_per_pass: recovered,
    };
  } finally {
    await store.close();
  }
}

export async function runDepth(ctx: BenchContext): Promise<DepthSection> {
  const { sizes } = ctx;
  const measured = sizes.depthMeasured;
  const queues: { depth: number; queue: Queue; store: SqliteStore; fillSeconds: number; rates: number[] }[] = [];
  try {
    for (const depth of sizes.depths) {
      const dir = ctx.dirs.make(`depth-${depth}`);
      const store = await SqliteStore.open({ path: sqliteFile(dir), clock: systemClock });
      const queue = new Queue(store, { actor: 'bench' });
      queues.push({ depth, queue, store, fillSeconds: 0, rates: [] });
      ctx.progress(`filling a queue of ${depth + measured} jobs`);
      const fillSeconds = await fillQueue(queue, depth + measured);
      (queues[queues.length - 1] as { fillSeconds: number }).fillSeconds = fillSeconds;
      ctx.progress(`filled ${depth + measured} jobs in ${fillSeconds.toFixed(1)} s`);
    }
    for (let run = 0; run < sizes.runs; run++) {
      for (const entry of queues) {
        ctx.progress(`depth round ${run + 1}/${sizes.runs}: claim+complete ${measured} jobs at depth ${entry.depth}`);
        if (run > 0) await fillQueue(entry.queue, measured);
        entry.rates.push(await drain(entry.store, measured));
      }
    }
    const shallowest = queues[0];
    const deepest = queues[queues.length - 1];
    if (shallowest === undefined || deepest === undefined) throw new Error('no depths');
    const sweeper = await sweeperPasses(ctx);
    return {
      method: `a claim (limit 1), then a complete, per job (2 transactions), ${measured} jobs per measurement, the queue refilled between rounds; events and attempts written as always`,
      measured_jobs: measured,
      fill_chunk: FILL_CHUNK,
      depths: queues.map((q) => ({
        depth: q.depth,
        fill_seconds: round(q.fillSeconds, 1),
        fill_jobs_per_sec: round((q.depth + measured) / q.fillSeconds),
        claim_complete_jobs_per_sec: summarize(q.rates),
      })),
      deepest_over_shallowest: summarize(
        deepest.rates.map((rate, i) => rate / (shallowest.rates[i] as number)),
        2,
      ),
      sweeper,
    };
  } finally {
    for (const entry of queues) await entry.queue.close();
  }
}
