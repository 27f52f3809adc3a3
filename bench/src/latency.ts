/** Sections 5 and 10 (on PostgreSQL, with NOTIFY and without): enqueue-to-start latency with idle children, and what idle children cost in CPU. */
import type { Store } from '../../dist/src/store/types.js';
import { SeededRandom } from '../../dist/scripts/random.js';
import {
  clockTicksPerSecond,
  cpuTicks,
  descendantsOf,
  quantilesOverRuns,
  sleep,
  summarize,
  waitFor,
  type Stat,
} from './common.js';
import type { BenchContext } from './context.js';
import type { Driver } from './database.js';
import {
  BENCH_CLASS,
  describeClass,
  SUCCEEDED_COUNT,
  withSupervisor,
  writeNoopHandler,
  type SupervisedRun,
} from './leasehold.js';

const CHILDREN = 4;
const SETTLE_MS = 2_000;

/** The percentiles each latency is reported at, every one summarized over the runs. */
const QUANTILES = ['p50', 'p95', 'p99', 'max'] as const;
export type LatencyStats = Record<(typeof QUANTILES)[number], Stat>;

export interface LatencySection {
  config: string;
  jobs_per_run: number;
  gap_ms: [number, number];
  unit: 'ms';
  /** Primary: started_at (the handler's real start, stamped by the child) minus created_at. */
  start_latency_ms: LatencyStats;
  claim_latency_ms: LatencyStats;
  started_event_latency_ms: LatencyStats;
  idle_cpu: {
    children: number;
    window_seconds: number;
    clock_ticks_per_second: number;
    /** CPU seconds per minute of wall time, supervisor + children. */
    cpu_seconds_per_minute: Stat;
    supervisor_cpu_seconds_per_minute: Stat;
    children_cpu_seconds_per_minute: Stat;
  };
}

/** CPU seconds per minute of the supervisor and its descendants over `seconds`. */
async function idleWindow(
  supervisorPid: number,
  seconds: number,
  ticksPerSecond: number,
): Promise<{ total: number; supervisor: number; children: number }> {
  const pids = [supervisorPid, ...descendantsOf(supervisorPid)];
  const before = pids.map(cpuTicks);
  await sleep(seconds * 1000);
  const after = pids.map(cpuTicks);
  const used = pids.map((pid, i) => {
    const a = before[i];
    const b = after[i];
    if (a === undefined || b === undefined) throw new Error(`process ${pid} went away during the idle window`);
    return ((b - a) / ticksPerSecond) * (60 / seconds);
  });
  const supervisor = used[0] ?? 0;
  const total = used.reduce((sum, v) => sum + v, 0);
  return { total, supervisor, children: total - supervisor };
}

/** Each run's latencies by what they are measured as: the start, the claim, the STARTED event. */
type Latencies = Record<'start' | 'claim' | 'event', number[]>;

async function readLatencies(store: Store, ids: number[]): Promise<Latencies> {
  const into: Latencies = { start: [], claim: [], event: [] };
  for (const id of ids) {
    const job = await store.jobGet({ id });
    if (job === undefined || job.started_at === null || job.claimed_at === null)
      throw new Error(`job ${id} has no start`);
    into.start.push(job.started_at - job.created_at);
    into.claim.push(job.claimed_at - job.created_at);
    const started = (await store.eventList({ jobId: id })).find((e) => e.event === 'STARTED');
    if (started !== undefined) into.event.push(started.ts - job.created_at);
  }
  return into;
}

/** Where the queue lives; `listen: false` runs PostgreSQL with `listen=off` (children poll, no NOTIFY wake-ups). */
export interface LatencyVariant {
  driver: Driver;
  listen?: boolean;
}

function describeVariant(variant: LatencyVariant): string {
  if (variant.driver === 'sqlite') return 'SQLite (wake-ups: a watch on the WAL file)';
  return variant.listen === false
    ? 'PostgreSQL with listen=off (no NOTIFY: children poll every poll_seconds)'
    : 'PostgreSQL (wake-ups: LISTEN/NOTIFY)';
}

export async function runLatency(
  ctx: BenchContext,
  variant: LatencyVariant = { driver: 'sqlite' },
): Promise<LatencySection> {
  ctx.progress(`latency on ${describeVariant(variant)}`);
  const label = `latency-${variant.driver}${variant.listen === false ? '-poll' : ''}`;
  const setup = { driver: variant.driver, listen: variant.listen, handler: writeNoopHandler, processes: CHILDREN };
  return withSupervisor(ctx, label, setup, (run) => measure(ctx, run, describeVariant(variant)));
}

async function measure(
  ctx: BenchContext,
  { config, database, queue, supervisor }: SupervisedRun,
  where: string,
): Promise<LatencySection> {
  const { sizes } = ctx;
  const ticksPerSecond = clockTicksPerSecond();
  // The queue's tables exist once it is open: then the counting connection may count.
  const counter = await database.counter();
  try {
    await supervisor.waitReady(queue.store, CHILDREN);
    await sleep(SETTLE_MS);
    const idle: { total: number; supervisor: number; children: number }[] = [];
    for (let run = 0; run < sizes.runs; run++) {
      ctx.progress(
        `idle CPU window ${run + 1}/${sizes.runs} (${sizes.idleWindowSeconds} s, ${CHILDREN} idle children)`,
      );
      idle.push(await idleWindow(supervisor.pid, sizes.idleWindowSeconds, ticksPerSecond));
    }

    const random = new SeededRandom(5);
    const [minGap, maxGap] = sizes.latencyGapMs;
    const countDone = counter.count(SUCCEEDED_COUNT);
    const runs: Latencies[] = [];
    for (let run = 0; run < sizes.runs; run++) {
      ctx.progress(
        `latency run ${run + 1}/${sizes.runs}: ${sizes.latencyJobs} jobs, one at a time, ${minGap}-${maxGap} ms apart`,
      );
      const ids: number[] = [];
      for (let i = 0; i < sizes.latencyJobs; i++) {
        await sleep(minGap + random.next() * (maxGap - minGap));
        ids.push((await queue.enqueue({ class: BENCH_CLASS, payload: { n: i } })).id);
      }
      const expected = (run + 1) * sizes.latencyJobs;
      await waitFor(`${expected} jobs SUCCEEDED`, async () => ((await countDone()) >= expected ? true : undefined), {
        timeoutMs: 60_000,
      });
      runs.push(await readLatencies(queue.store, ids));
    }
    return {
      config: `${where}, default config but processes (${describeClass(config)}), no-op handler`,
      jobs_per_run: sizes.latencyJobs,
      gap_ms: [minGap, maxGap],
      unit: 'ms',
      start_latency_ms: quantilesOverRuns(
        runs.map((r) => r.start),
        QUANTILES,
        1,
      ),
      claim_latency_ms: quantilesOverRuns(
        runs.map((r) => r.claim),
        QUANTILES,
        1,
      ),
      started_event_latency_ms: quantilesOverRuns(
        runs.map((r) => r.event),
        QUANTILES,
        1,
      ),
      idle_cpu: {
        children: CHILDREN,
        window_seconds: sizes.idleWindowSeconds,
        clock_ticks_per_second: ticksPerSecond,
        cpu_seconds_per_minute: summarize(
          idle.map((w) => w.total),
          3,
        ),
        supervisor_cpu_seconds_per_minute: summarize(
          idle.map((w) => w.supervisor),
          3,
        ),
        children_cpu_seconds_per_minute: summarize(
          idle.map((w) => w.children),
          3,
        ),
      },
    };
  } finally {
    await counter.close();
  }
}

export interface PgLatencySection {
  notify: LatencySection;
  poll_only: LatencySection;
}

export async function runPgLatency(ctx: BenchContext): Promise<PgLatencySection> {
  return {
    notify: await runLatency(ctx, { driver: 'postgres' }),
    poll_only: await runLatency(ctx, { driver: 'postgres', listen: false }),
  };
}
