/**
 * The sections run in rounds (rounds.ts): 1-3 together (leasehold at every
 * processes × claim_batch, plainjob, the raw loop) with BullMQ, and 9,
 * section 1 on PostgreSQL with the raw loop beside it at the run's
 * claim_batch, with graphile-worker.
 */
import type { Stat } from './common.js';
import type { BenchContext } from './context.js';
import { POLL_MS } from './drain.js';
import {
  bullmqContender,
  bullmqSection,
  graphileContenders,
  graphileSection,
  type BullmqSection,
  type GraphileSection,
} from './peers.js';
import { plainjobDrain } from './plainjob.js';
import { rawDrain } from './raw.js';
import {
  cpuOf,
  CPU_PER_JOB,
  lhKey,
  leaseholdRatios,
  ratesOf,
  ratioOf,
  rawKey,
  rawSection,
  runRounds,
  type BookkeepingFloor,
  type Contender,
  type Ratio,
  type RawSection,
  type Rounds,
} from './rounds.js';
import { leaseholdContenders, runBatches, throughputRows, type ThroughputSection } from './throughput.js';

export const METHOD =
  `jobs/s from the first job seen SUCCEEDED to the last (a read-only connection counts finished rows every ${POLL_MS.sqlite} ms); ` +
  '`from_start` is from spawning the process(es) to the last job, start-up included';

export interface PlainjobSection {
  package: string;
  method: string;
  jobs: number;
  /** `cpu_ms_per_1k_jobs`: every worker process, as section 1's supervisor + children. */
  results: { processes: number; jobs_per_sec: Stat; jobs_per_sec_from_start: Stat; cpu_ms_per_1k_jobs: Stat }[];
  ratios: Ratio[];
  /** Leasehold's CPU per job (supervisor + children) over plainjob's, as many processes, within a round. */
  cpu_ratios: Ratio[];
}

export interface ComparisonSections {
  throughput?: ThroughputSection;
  plainjob?: PlainjobSection;
  raw?: RawSection;
  bullmq?: BullmqSection;
}

/** The sections of the SQLite rounds. */
export type ComparisonWanted = Record<'throughput' | 'plainjob' | 'raw' | 'bullmq', boolean>;

const pjKey = (p: number) => `pj:${p}`;
const floorKey = (p: number) => `floor:${p}`;

/** The drains of a round, for the sections wanted. */
function contenders(ctx: BenchContext, want: ComparisonWanted): Contender[] {
  const { sizes } = ctx;
  return [
    ...(want.throughput ? leaseholdContenders(ctx, 'sqlite') : []),
    ...(want.plainjob
      ? sizes.plainjobProcesses.map((p) => ({
          key: pjKey(p),
          label: `plainjob ${p} processes`,
          drain: () => plainjobDrain(ctx, p),
        }))
      : []),
    ...(want.raw
      ? sizes.rawProcesses.flatMap((p) => [
          ...sizes.rawPerTx.map((t) => ({
            key: rawKey(p, t),
            label: `raw loop ${p} processes, ${t} per transaction`,
            drain: () => rawDrain(ctx, p, t),
          })),
          {
            key: floorKey(p),
            label: `raw loop with bookkeeping, ${p} processes, ${ctx.claimBatch} per transaction`,
            drain: () => rawDrain(ctx, p, ctx.claimBatch, 'sqlite', true),
          },
        ])
      : []),
    ...(want.bullmq ? [bullmqContender(ctx)] : []),
  ];
}

export async function runComparison(
  ctx: BenchContext,
  want: ComparisonWanted,
  plainjobVersion: string,
): Promise<ComparisonSections> {
  const { sizes } = ctx;
  const batches = runBatches(ctx);
  const rounds = await runRounds(ctx, 'SQLite', contenders(ctx, want));
  const sections: ComparisonSections = {};
  if (want.throughput) {
    sections.throughput = {
      method: METHOD,
      jobs: sizes.jobs,
      claim_batches: batches,
      results: throughputRows(ctx, rounds, 'sqlite'),
      four_over_two_children: ratioOf(rounds, lhKey(4, ctx.claimBatch), lhKey(2, ctx.claimBatch)),
    };
  }
  if (want.plainjob) {
    sections.plainjob = {
      package: `plainjob@${plainjobVersion}`,
      method: `${METHOD}; plainjob's own worker loop (defineWorker) with a no-op processor and a silent logger, one worker per process; CPU: the worker processes, measured as section 1's`,
      jobs: sizes.jobs,
      results: sizes.plainjobProcesses.map((p) => ({
        processes: p,
        ...ratesOf(rounds, pjKey(p)),
        cpu_ms_per_1k_jobs: cpuOf(rounds, pjKey(p)),
      })),
      ratios: leaseholdRatios(rounds, sizes.plainjobProcesses, batches, (p) => ({ key: pjKey(p) })),
      cpu_ratios: leaseholdRatios(rounds, sizes.plainjobProcesses, batches, (p) => ({ key: pjKey(p) }), CPU_PER_JOB),
    };
  }
  if (want.bullmq) sections.bullmq = bullmqSection(ctx, rounds);
  if (want.raw) {
    sections.raw = {
      ...rawSection(rounds, {
        method: `${METHOD}; bare better-sqlite3 loop: claim n in one transaction (UPDATE ... RETURNING, fresh token), complete n in one transaction (fenced on id, token, status); no attempts, no events, no IPC`,
        jobs: sizes.jobs,
        processes: sizes.rawProcesses,
        perTx: sizes.rawPerTx,
        batches,
      }),
      bookkeeping: bookkeepingFloor(rounds, sizes.rawProcesses, ctx.claimBatch),
    };
  }
  return sections;
}

function bookkeepingFloor(rounds: Rounds, processes: number[], perTx: number): BookkeepingFloor {
  return {
    method: `${METHOD}; the raw loop (section 3) at claim_batch jobs a transaction, with foreign keys on, and in the same transactions an attempt row per claim (ended with the complete) and two timeline rows per job (STARTED with the claim, SUCCEEDED), one statement a row; no other index, no IPC`,
    per_tx: perTx,
    results: processes.map((p) => ({ processes: p, ...ratesOf(rounds, floorKey(p)) })),
    leasehold_over_floor: leaseholdRatios(rounds, processes, [perTx], (p) => ({ key: floorKey(p), per_tx: perTx })),
    floor_over_plainjob: processes.flatMap((p) => {
      const ratio = ratioOf(rounds, floorKey(p), pjKey(p));
      return ratio === undefined ? [] : [{ processes: p, ratio }];
    }),
  };
}

export interface PgComparisonSections {
  'pg-throughput'?: ThroughputSection;
  'graphile-worker'?: GraphileSection;
}

/** Section 9 and graphile-worker, in the same rounds. */
export async function runPgComparison(
  ctx: BenchContext,
  want: Record<keyof PgComparisonSections, boolean>,
): Promise<PgComparisonSections> {
  const { sizes } = ctx;
  const raw = sizes.rawProcesses.map((p) => ({
    key: rawKey(p, ctx.claimBatch),
    label: `raw loop ${p} processes, ${ctx.claimBatch} per statement`,
    drain: () => rawDrain(ctx, p, ctx.claimBatch, 'postgres'),
  }));
  const leasehold = want['pg-throughput'] ? [...leaseholdContenders(ctx, 'postgres'), ...raw] : [];
  const rounds = await runRounds(ctx, 'PostgreSQL', [
    ...leasehold,
    ...(want['graphile-worker'] ? graphileContenders(ctx) : []),
  ]);
  return {
    ...(want['pg-throughput'] ? { 'pg-throughput': pgThroughputSection(ctx, rounds) } : {}),
    ...(want['graphile-worker'] ? { 'graphile-worker': graphileSection(ctx, rounds) } : {}),
  };
}

function pgThroughputSection(ctx: BenchContext, rounds: Rounds): ThroughputSection {
  const { sizes } = ctx;
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
