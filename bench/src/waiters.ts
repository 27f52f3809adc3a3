/**
 * Section 19 (issue 42): what waiting for outcomes costs the queue. Section
 * 1's no-op drain through `supervise` (2 children, the run's claim_batch),
 * two ways: as it is, and with an application attached, in the bench's
 * process on the Queue that filled it: `waiters` waitFor calls on jobs
 * spread through the queue and one events consumer reading every outcome.
 * On SQLite and on PostgreSQL; in each run the two arms drain fresh queues
 * one after the other, taking turns (plain first in even runs), so that a
 * noisy moment hits both, and the ratio is taken within the run. Also: how
 * long after its job's `finished_at` each waitFor resolved.
 */
import type { Queue } from '../../dist/src/queue/queue.js';
import { pollDrain, quantilesOverRuns, steadyRate, summarize, waitFor, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import type { Driver } from './database.js';
import { POLL_MS } from './drain.js';
import { BENCH_CLASS, inChunks, SUCCEEDED_COUNT, withSupervisor, writeNoopHandler } from './leasehold.js';

/** Issue 42's cost: no-op throughput with the waiters and the consumer attached ≥ 0.95× without, within a run. */
export const WAITERS_TARGET_RATIO = 0.95;
const CHILDREN = 2;
/** How long after the drain the last waits and the consumer's last outcome may take. */
const SETTLE_MS = 60_000;

export interface WaitersDriver {
  driver: Driver;
  plain: { jobs_per_sec: Stat };
  attached: { jobs_per_sec: Stat };
  attached_over_plain: Stat;
  /** When each waitFor resolved, after its job's finished_at (ms, the same machine's clock): each run's quantile. */
  wait_latency_ms: { p50: Stat; p99: Stat };
  /** Outcomes the events consumer read in each run: every job's, once. */
  events_read: Stat;
}

export interface WaitersSection {
  unit: 'jobs/s';
  method: string;
  jobs: number;
  waiters: number;
  runs: number;
  drivers: WaitersDriver[];
}

type Arm = 'plain' | 'attached';

/** The application attached to a queue: its waits and its events consumer, and what they saw so far. */
interface Application {
  latencies: number[];
  eventsRead: number;
  /** Every wait resolved and every outcome read. */
  finished: boolean;
}

/** `waiters` waits on jobs spread evenly through `ids`, and a consumer of every outcome from now on. */
function attach(queue: Queue, ids: number[], waiters: number): Application {
  const app: Application = { latencies: [], eventsRead: 0, finished: false };
  const waits = Array.from({ length: waiters }, async (_, i) => {
    const job = await queue.waitFor(ids[Math.floor(((i + 0.5) * ids.length) / waiters)]!);
    app.latencies.push(Date.now() - job.finished_at!);
  });
  const consumer = (async () => {
    for await (const outcome of queue.events()) {
      if (outcome.status === 'SUCCEEDED') app.eventsRead += 1;
      if (app.eventsRead >= ids.length) return;
    }
  })();
  void Promise.all([...waits, consumer]).then(() => (app.finished = true));
  return app;
}

/** Enqueue `count` no-op jobs in bulk; their ids. */
async function fill(queue: Queue, count: number): Promise<number[]> {
  const ids: number[] = [];
  await inChunks(count, async (ns) => {
    const added = await queue.enqueueMany(ns.map((n) => ({ class: BENCH_CLASS, payload: { n } })));
    ids.push(...added.map((job) => job.id));
  });
  return ids;
}

/** One arm's drain on a fresh queue: jobs/s (steady), and the application when attached. */
async function drainArm(
  ctx: BenchContext,
  driver: Driver,
  arm: Arm,
  run: number,
): Promise<{ jobsPerSec: number; app?: Application }> {
  const { jobs } = ctx.sizes;
  let app: Application | undefined;
  const setup = {
    driver,
    handler: writeNoopHandler,
    processes: CHILDREN,
    claimBatch: ctx.claimBatch,
    before: async (queue: Queue) => {
      const ids = await fill(queue, jobs);
      if (arm === 'attached') app = attach(queue, ids, ctx.sizes.waiters);
    },
  };
  return withSupervisor(ctx, `waiters-${driver}-${arm}-${run}`, setup, async ({ database, supervisor }) => {
    const counter = await database.counter();
    try {
      const timing = await pollDrain(counter.count(SUCCEEDED_COUNT), jobs, {
        intervalMs: POLL_MS[driver],
        timeoutMs: ctx.sizes.drainTimeoutMs,
        alive: () => supervisor.deadReason(),
      });
      const attached = app;
      if (attached !== undefined)
        await waitFor('every wait resolved and every outcome read', () => attached.finished || undefined, {
          timeoutMs: SETTLE_MS,
        });
      return { jobsPerSec: steadyRate(timing, jobs), app: attached };
    } finally {
      await counter.close();
    }
  });
}

export async function runWaiters(ctx: BenchContext): Promise<WaitersSection> {
  const { runs, jobs, waiters } = ctx.sizes;
  const drivers: WaitersDriver[] = [];
  for (const driver of ['sqlite', 'postgres'] as const) {
    const rates: Record<Arm, number[]> = { plain: [], attached: [] };
    const ratios: number[] = [];
    const latencies: number[][] = [];
    const eventsRead: number[] = [];
    for (let run = 0; run < runs; run++) {
      const rate: Partial<Record<Arm, number>> = {};
      for (const arm of (run % 2 === 0 ? ['plain', 'attached'] : ['attached', 'plain']) as Arm[]) {
        ctx.progress(`waiters ${driver} run ${run + 1}/${runs}: ${arm}`);
        const { jobsPerSec, app } = await drainArm(ctx, driver, arm, run);
        rate[arm] = jobsPerSec;
        rates[arm].push(jobsPerSec);
        if (app !== undefined) {
          latencies.push(app.latencies);
          eventsRead.push(app.eventsRead);
        }
      }
      ratios.push(rate.attached! / rate.plain!);
    }
    drivers.push({
      driver,
      plain: { jobs_per_sec: summarize(rates.plain) },
      attached: { jobs_per_sec: summarize(rates.attached) },
      attached_over_plain: summarize(ratios, 2),
      wait_latency_ms: quantilesOverRuns(latencies, ['p50', 'p99'], 1),
      events_read: summarize(eventsRead),
    });
  }
  return {
    unit: 'jobs/s',
    method:
      `per run and arm, ${jobs} no-op jobs enqueued, then drained by supervise with ${CHILDREN} children (claim_batch ${ctx.claimBatch}); ` +
      `attached: ${waiters} queue.waitFor on jobs spread through the queue and one queue.events() consumer, on the bench's Queue, ` +
      `from before the supervisor starts; the arms take turns, the ratio is within the run`,
    jobs,
    waiters,
    runs,
    drivers,
  };
}
