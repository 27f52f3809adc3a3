/**
 * Drains run in rounds (sections 1-3, 9, 12 and 17): every configuration once a
 * round, back to back, and ratios taken within a round, so that a machine
 * busier in one round than another cannot fake a win or a loss.
 */
import { summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import type { DrainRun } from './drain.js';

/** One configuration of a round: its key in the round's results, a progress label, and its drain. */
export interface Contender<R extends DrainRun = DrainRun> {
  key: string;
  label: string;
  drain: () => Promise<R>;
}

/** Each round's drains by configuration key. */
export type Rounds = Map<string, DrainRun>[];

export const lhKey = (processes: number, batch: number) => `lh:${processes}:${batch}`;
export const rawKey = (processes: number, perTx: number) => `raw:${processes}:${perTx}`;

export async function runRounds(ctx: BenchContext, title: string, contenders: Contender[]): Promise<Rounds> {
  const rounds: Rounds = [];
  for (let round = 0; round < ctx.sizes.runs; round++) {
    const results = new Map<string, DrainRun>();
    rounds.push(results);
    for (const contender of contenders) {
      ctx.progress(`${title} round ${round + 1}/${ctx.sizes.runs}: ${contender.label}`);
      results.set(contender.key, await contender.drain());
    }
  }
  return rounds;
}

/** Every round's run of one configuration, as the drain that made it returned it. */
export function runsOf<R extends DrainRun>(rounds: Rounds, key: string): R[] {
  return rounds.map((round) => round.get(key) as R);
}

/** A configuration's steady and from-start rates, summarised over the rounds. */
export function ratesOf(rounds: Rounds, key: string): { jobs_per_sec: Stat; jobs_per_sec_from_start: Stat } {
  const runs = runsOf(rounds, key);
  return {
    jobs_per_sec: summarize(runs.map((r) => r.jobsPerSec)),
    jobs_per_sec_from_start: summarize(runs.map((r) => r.jobsPerSecFromStart)),
  };
}

/** What a ratio compares: jobs/s by default, or CPU per job. */
export type Figure = (run: DrainRun) => number | undefined;
const JOBS_PER_SEC: Figure = (run) => run.jobsPerSec;
export const CPU_PER_JOB: Figure = (run) => run.cpuMsPer1k;

/** a's figure over b's within each round, summarised; undefined unless every round measured both. */
export function ratioOf(rounds: Rounds, a: string, b: string, figure: Figure = JOBS_PER_SEC): Stat | undefined {
  const pairs = rounds.map((r) => [r.get(a), r.get(b)].map((run) => (run === undefined ? undefined : figure(run))));
  if (!pairs.every(([x, y]) => x !== undefined && y !== undefined)) return undefined;
  return summarize(
    pairs.map(([x, y]) => (x as number) / (y as number)),
    2,
  );
}

/** A configuration's CPU ms per 1,000 jobs over the rounds (section 1's rule: from a tenth of the jobs done). */
export function cpuOf(rounds: Rounds, key: string): Stat {
  return summarize(runsOf(rounds, key).map((run) => run.cpuMsPer1k ?? Number.NaN));
}

export interface Ratio {
  leasehold: { processes: number; claim_batch: number };
  other: { processes: number; per_tx?: number };
  ratio: Stat;
}

/** Each leasehold row (processes × batch) over the configuration `otherKey(processes)` names, where every round ran both. */
export function leaseholdRatios(
  rounds: Rounds,
  processes: number[],
  batches: number[],
  other: (processes: number) => { key: string; per_tx?: number },
  figure?: Figure,
): Ratio[] {
  return processes.flatMap((p) =>
    batches.flatMap((b) => {
      const { key, per_tx } = other(p);
      const ratio = ratioOf(rounds, lhKey(p, b), key, figure);
      return ratio === undefined
        ? []
        : [
            {
              leasehold: { processes: p, claim_batch: b },
              other: { processes: p, ...(per_tx === undefined ? {} : { per_tx }) },
              ratio,
            },
          ];
    }),
  );
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
 * leasehold over it is what its indexes, supervision and IPC cost; it over
 * plainjob says whether the plainjob target can be met with full
 * bookkeeping at all.
 */
export interface BookkeepingFloor {
  method: string;
  per_tx: number;
  results: { processes: number; jobs_per_sec: Stat; jobs_per_sec_from_start: Stat }[];
  leasehold_over_floor: Ratio[];
  floor_over_plainjob: { processes: number; ratio: Stat }[];
}

/** The raw runs of every round, and each leasehold row over the raw loop of as many processes at its largest per_tx. */
export function rawSection(
  rounds: Rounds,
  shape: { method: string; jobs: number; processes: number[]; perTx: number[]; batches: number[] },
): RawSection {
  const ceiling = Math.max(...shape.perTx);
  return {
    method: shape.method,
    jobs: shape.jobs,
    results: shape.processes.flatMap((p) =>
      shape.perTx.map((t) => ({ processes: p, per_tx: t, ...ratesOf(rounds, rawKey(p, t)) })),
    ),
    ratios: leaseholdRatios(rounds, shape.processes, shape.batches, (p) => ({
      key: rawKey(p, ceiling),
      per_tx: ceiling,
    })),
  };
}
