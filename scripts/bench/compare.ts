/**
 * Sections 1-3 run together, in rounds: each round drains the same number
 * of jobs through leasehold (every processes × claim_batch), plainjob and
 * the raw loop, back to back, and the ratios are taken within the round, so
 * that a machine busier in one round than another cannot fake a win or a
 * loss. Each figure is the median (min, max) over the rounds.
 */
import { summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { plainjobDrain } from './plainjob.js';
import { rawDrain } from './raw.js';
import { leaseholdDrain, POLL_MS, throughputRows, type DrainRun, type LeaseholdDrainRun, type ThroughputSection } from './throughput.js';

export const METHOD =
  `jobs/s from the first job seen SUCCEEDED to the last (a read-only connection counts finished rows every ${POLL_MS.sqlite} ms); ` +
  '`from_start` is from spawning the process(es) to the last job, start-up included';

export interface Ratio {
  leasehold: { processes: number; claim_batch: number };
  other: { processes: number; per_tx?: number };
  ratio: Stat;
}

/** The raw ceiling's runs and leasehold's ratios to it (section 3, and beside section 9). */
export interface RawSection {
  method: string;
  jobs: number;
  results: { processes: number; per_tx: number; jobs_per_sec: Stat; jobs_per_sec_from_start: Stat }[];
  ratios: Ratio[];
  /** Section 3 only. */
  bookkeeping?: BookkeepingFloor;
}

/**
 * The raw loop with the data model's bookkeeping (SQLite, raw-worker.ts):
 * what a worker that writes an attempt row and two timeline rows per job,
 * and nothing more, drains at leasehold's claim_batch. Leasehold over it is
 * what its indexes, supervision and IPC cost; it over plainjob says whether
 * the plainjob target can be met with full bookkeeping at all.
 */
export interface BookkeepingFloor {
  method: string;
  per_tx: number;
  results: { processes: number; jobs_per_sec: Stat; jobs_per_sec_from_start: Stat }[];
  leasehold_over_floor: Ratio[];
  floor_over_plainjob: { processes: number; ratio: Stat }[];
}

export interface ComparisonSections {
  throughput?: ThroughputSection;
  plainjob?: { package: string; method: string; jobs: number; results: { processes: number; jobs_per_sec: Stat; jobs_per_sec_from_start: Stat }[]; ratios: Ratio[] };
  raw?: RawSection;
}

type Key = string;
/** Each round's drains by configuration. */
export type Rounds = Map<Key, DrainRun>[];
export const lhKey = (p: number, b: number) => `lh:${p}:${b}`;
const pjKey = (p: number) => `pj:${p}`;
export const rawKey = (p: number, t: number) => `raw:${p}:${t}`;
const floorKey = (p: number) => `floor:${p}`;

const stat = (rounds: Rounds, key: Key, field: keyof DrainRun) => summarize(rounds.map((r) => (r.get(key) as DrainRun)[field]));

/** a's jobs/s over b's within each round, summarised; undefined unless every round ran both. */
function ratio(rounds: Rounds, a: Key, b: Key): Stat | undefined {
  if (!rounds.every((r) => r.has(a) && r.has(b))) return undefined;
  return summarize(rounds.map((r) => (r.get(a) as DrainRun).jobsPerSec / (r.get(b) as DrainRun).jobsPerSec), 2);
}

/** The raw runs of every round, and each leasehold row (processes × batch) over the raw loop of as many processes at its largest per_tx. */
export function rawSection(rounds: Rounds, shape: { method: string; jobs: number; processes: number[]; perTx: number[]; batches: number[] }): RawSection {
  const ratios: Ratio[] = [];
  const ceiling = Math.max(...shape.perTx);
  for (const p of shape.processes) {
    for (const b of shape.batches) {
      const r = ratio(rounds, lhKey(p, b), rawKey(p, ceiling));
      if (r !== undefined) ratios.push({ leasehold: { processes: p, claim_batch: b }, other: { processes: p, per_tx: ceiling }, ratio: r });
    }
  }
  return {
    method: shape.method,
    jobs: shape.jobs,
    results: shape.processes.flatMap((p) =>
      shape.perTx.map((t) => ({ processes: p, per_tx: t, jobs_per_sec: stat(rounds, rawKey(p, t), 'jobsPerSec'), jobs_per_sec_from_start: stat(rounds, rawKey(p, t), 'jobsPerSecFromStart') })),
    ),
    ratios,
  };
}

export async function runComparison(ctx: BenchContext, want: { throughput: boolean; plainjob: boolean; raw: boolean }, plainjobVersion: string): Promise<ComparisonSections> {
  const { sizes } = ctx;
  const batches = [...new Set([1, ctx.claimBatch])];
  const rounds: Rounds = [];

  for (let round = 0; round < sizes.runs; round++) {
    const results = new Map<Key, DrainRun>();
    rounds.push(results);
    if (want.throughput) {
      for (const p of sizes.processes) {
        for (const b of batches) {
          ctx.progress(`round ${round + 1}/${sizes.runs}: leasehold ${p} children, claim_batch ${b}`);
          results.set(lhKey(p, b), await leaseholdDrain(ctx, p, b));
        }
      }
    }
    if (want.plainjob) {
      for (const p of sizes.plainjobProcesses) {
        ctx.progress(`round ${round + 1}/${sizes.runs}: plainjob ${p} processes`);
        results.set(pjKey(p), await plainjobDrain(ctx, p));
      }
    }
    if (want.raw) {
      for (const p of sizes.rawProcesses) {
        for (const t of sizes.rawPerTx) {
          ctx.progress(`round ${round + 1}/${sizes.runs}: raw loop ${p} processes, ${t} per transaction`);
          results.set(rawKey(p, t), await rawDrain(ctx, p, t));
        }
        ctx.progress(`round ${round + 1}/${sizes.runs}: raw loop with bookkeeping, ${p} processes, ${ctx.claimBatch} per transaction`);
        results.set(floorKey(p), await rawDrain(ctx, p, ctx.claimBatch, 'sqlite', true));
      }
    }
  }

  const sections: ComparisonSections = {};
  if (want.throughput) {
    sections.throughput = {
      method: METHOD,
      jobs: sizes.jobs,
      claim_batches: batches,
      results: throughputRows(sizes.processes, batches, (p, b) => rounds.map((r) => r.get(lhKey(p, b)) as LeaseholdDrainRun), 'sqlite'),
      four_over_two_children: ratio(rounds, lhKey(4, ctx.claimBatch), lhKey(2, ctx.claimBatch)),
    };
  }
  if (want.plainjob) {
    const ratios: Ratio[] = [];
    for (const p of sizes.plainjobProcesses) {
      for (const b of batches) {
        const r = ratio(rounds, lhKey(p, b), pjKey(p));
        if (r !== undefined) ratios.push({ leasehold: { processes: p, claim_batch: b }, other: { processes: p }, ratio: r });
      }
    }
    sections.plainjob = {
      package: `plainjob@${plainjobVersion}`,
      method: `${METHOD}; plainjob's own worker loop (defineWorker) with a no-op processor and a silent logger, one worker per process`,
      jobs: sizes.jobs,
      results: sizes.plainjobProcesses.map((p) => ({ processes: p, jobs_per_sec: stat(rounds, pjKey(p), 'jobsPerSec'), jobs_per_sec_from_start: stat(rounds, pjKey(p), 'jobsPerSecFromStart') })),
      ratios,
    };
  }
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
  const leaseholdOver: Ratio[] = [];
  const overPlainjob: BookkeepingFloor['floor_over_plainjob'] = [];
  for (const p of processes) {
    const lh = ratio(rounds, lhKey(p, perTx), floorKey(p));
    if (lh !== undefined) leaseholdOver.push({ leasehold: { processes: p, claim_batch: perTx }, other: { processes: p, per_tx: perTx }, ratio: lh });
    const pj = ratio(rounds, floorKey(p), pjKey(p));
    if (pj !== undefined) overPlainjob.push({ processes: p, ratio: pj });
  }
  return {
    method: `${METHOD}; the raw loop (section 3) at claim_batch jobs a transaction, with foreign keys on, and in the same transactions an attempt row per claim (ended with the complete) and two timeline rows per job (STARTED with the claim, SUCCEEDED), one statement a row; no other index, no IPC`,
    per_tx: perTx,
    results: processes.map((p) => ({ processes: p, jobs_per_sec: stat(rounds, floorKey(p), 'jobsPerSec'), jobs_per_sec_from_start: stat(rounds, floorKey(p), 'jobsPerSecFromStart') })),
    leasehold_over_floor: leaseholdOver,
    floor_over_plainjob: overPlainjob,
  };
}
