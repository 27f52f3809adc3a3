/**
 * The pg-* sections, each measurement in a schema of its own: pg-throughput
 * is section 1 in rounds with the raw ceiling beside it (raw-worker.ts, the
 * run's claim_batch per statement); pg-latency is section 5 with
 * LISTEN/NOTIFY wake-ups and with `listen=off`.
 */
import type { BenchContext } from './context.js';
import { POLL_MS } from './drain.js';
import { runLatency, type LatencySection } from './latency.js';
import { rawDrain } from './raw.js';
import { rawKey, rawSection, runRounds } from './rounds.js';
import { leaseholdContenders, runBatches, throughputRows, type ThroughputSection } from './throughput.js';

export interface PgLatencySection {
  notify: LatencySection;
  poll_only: LatencySection;
}

export async function runPgThroughput(ctx: BenchContext): Promise<ThroughputSection> {
  const { sizes } = ctx;
  const raw = sizes.rawProcesses.map((p) => ({ key: rawKey(p, ctx.claimBatch), label: `raw loop ${p} processes, ${ctx.claimBatch} per statement`, drain: () => rawDrain(ctx, p, ctx.claimBatch, 'postgres') }));
  const rounds = await runRounds(ctx, 'PostgreSQL', [...leaseholdContenders(ctx, 'postgres'), ...raw]);
  const method =
    `jobs/s from the first job seen SUCCEEDED to the last (a second connection counts finished rows every ${POLL_MS.postgres} ms); ` +
    '`from_start` is from spawning the supervisor to the last job';
  return {
    method: `${method}; CPU \`server\` is every postgres process on this machine`,
    jobs: sizes.jobs,
    claim_batches: runBatches(ctx),
    results: throughputRows(ctx, rounds, 'postgres'),
    raw: rawSection(rounds, {
      method: `${method}; bare \`pg\` loop, one client a process: claim n in one statement (UPDATE ... FOR NO KEY UPDATE SKIP LOCKED ... RETURNING, fresh token), complete n in one statement (fenced on id, token, status); no attempts, no events, no IPC`,
      jobs: sizes.jobs,
      processes: sizes.rawProcesses,
      perTx: [ctx.claimBatch],
      batches: runBatches(ctx),
    }),
  };
}

export async function runPgLatency(ctx: BenchContext): Promise<PgLatencySection> {
  return {
    notify: await runLatency(ctx, { driver: 'postgres' }),
    poll_only: await runLatency(ctx, { driver: 'postgres', listen: false }),
  };
}
