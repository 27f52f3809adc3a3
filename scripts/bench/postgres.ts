/**
 * The pg-* sections: leasehold on the PostgreSQL server, each measurement in
 * a schema of its own. pg-throughput drains the same no-op jobs as section 1
 * with 1, 2 and 4 children (claim_batch 1 and the run's default), in rounds;
 * pg-latency is section 5 twice: with LISTEN/NOTIFY wake-ups, and with
 * `listen=off` (children only poll).
 */
import type { BenchContext } from './context.js';
import { runLatency, type LatencySection } from './latency.js';
import { leaseholdDrain, POLL_MS, throughputRows, type LeaseholdDrainRun, type ThroughputSection } from './throughput.js';

export interface PgLatencySection {
  notify: LatencySection;
  poll_only: LatencySection;
}

export async function runPgThroughput(ctx: BenchContext): Promise<ThroughputSection> {
  const { sizes } = ctx;
  const batches = [...new Set([1, ctx.claimBatch])];
  const runs = new Map<string, LeaseholdDrainRun[]>();
  const key = (p: number, b: number) => `${p}:${b}`;
  for (let round = 0; round < sizes.runs; round++) {
    for (const p of sizes.processes) {
      for (const b of batches) {
        ctx.progress(`PostgreSQL round ${round + 1}/${sizes.runs}: leasehold ${p} children, claim_batch ${b}`);
        const run = await leaseholdDrain(ctx, p, b, 'postgres');
        runs.set(key(p, b), [...(runs.get(key(p, b)) ?? []), run]);
      }
    }
  }
  return {
    method:
      `jobs/s from the first job seen SUCCEEDED to the last (a second connection counts finished rows every ${POLL_MS.postgres} ms); ` +
      '`from_start` is from spawning the supervisor to the last job; CPU `server` is every postgres process on this machine',
    jobs: sizes.jobs,
    claim_batches: batches,
    results: throughputRows(sizes.processes, batches, (p, b) => runs.get(key(p, b)) ?? [], 'postgres'),
  };
}

export async function runPgLatency(ctx: BenchContext): Promise<PgLatencySection> {
  return {
    notify: await runLatency(ctx, { driver: 'postgres' }),
    poll_only: await runLatency(ctx, { driver: 'postgres', listen: false }),
  };
}
