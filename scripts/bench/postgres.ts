/**
 * The pg-* sections: leasehold on the PostgreSQL server, each measurement in
 * a schema of its own. pg-throughput drains the same no-op jobs as section 1
 * with 1, 2 and 4 children (claim_batch 1 and the run's default), and the
 * raw ceiling with 1 and 2 processes, in rounds;
 * pg-latency is section 5 twice: with LISTEN/NOTIFY wake-ups, and with
 * `listen=off` (children only poll).
 */
import { lhKey, rawKey, rawSection, type Rounds } from './compare.js';
import type { BenchContext } from './context.js';
import { runLatency, type LatencySection } from './latency.js';
import { rawDrain } from './raw.js';
import { leaseholdDrain, POLL_MS, throughputRows, type DrainRun, type LeaseholdDrainRun, type ThroughputSection } from './throughput.js';

export interface PgLatencySection {
  notify: LatencySection;
  poll_only: LatencySection;
}

/**
 * Section 9, in rounds: leasehold at every processes × claim_batch, then the
 * raw loop (raw-worker.ts) with 1 and 2 processes at the run's claim_batch
 * per statement; leasehold over raw is taken within each round.
 */
export async function runPgThroughput(ctx: BenchContext): Promise<ThroughputSection> {
  const { sizes } = ctx;
  const batches = [...new Set([1, ctx.claimBatch])];
  const rounds: Rounds = [];
  for (let round = 0; round < sizes.runs; round++) {
    const results = new Map<string, DrainRun>();
    rounds.push(results);
    for (const p of sizes.processes) {
      for (const b of batches) {
        ctx.progress(`PostgreSQL round ${round + 1}/${sizes.runs}: leasehold ${p} children, claim_batch ${b}`);
        results.set(lhKey(p, b), await leaseholdDrain(ctx, p, b, 'postgres'));
      }
    }
    for (const p of sizes.rawProcesses) {
      ctx.progress(`PostgreSQL round ${round + 1}/${sizes.runs}: raw loop ${p} processes, ${ctx.claimBatch} per statement`);
      results.set(rawKey(p, ctx.claimBatch), await rawDrain(ctx, p, ctx.claimBatch, 'postgres'));
    }
  }
  const method =
    `jobs/s from the first job seen SUCCEEDED to the last (a second connection counts finished rows every ${POLL_MS.postgres} ms); ` +
    '`from_start` is from spawning the supervisor to the last job';
  return {
    method: `${method}; CPU \`server\` is every postgres process on this machine`,
    jobs: sizes.jobs,
    claim_batches: batches,
    results: throughputRows(sizes.processes, batches, (p, b) => rounds.map((r) => r.get(lhKey(p, b)) as LeaseholdDrainRun), 'postgres'),
    raw: rawSection(rounds, {
      method: `${method}; bare \`pg\` loop, one client a process: claim n in one statement (UPDATE ... FOR NO KEY UPDATE SKIP LOCKED ... RETURNING, fresh token), complete n in one statement (fenced on id, token, status); no attempts, no events, no IPC`,
      jobs: sizes.jobs,
      processes: sizes.rawProcesses,
      perTx: [ctx.claimBatch],
      batches,
    }),
  };
}

export async function runPgLatency(ctx: BenchContext): Promise<PgLatencySection> {
  return {
    notify: await runLatency(ctx, { driver: 'postgres' }),
    poll_only: await runLatency(ctx, { driver: 'postgres', listen: false }),
  };
}
