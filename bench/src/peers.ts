/**
 * Issue 32's peers, each drained in the rounds of the leasehold section it
 * is held against: BullMQ beside section 1 (SQLite), graphile-worker beside
 * section 9 (PostgreSQL). Their rows, and leasehold over them within a round.
 */
import { summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { BULLMQ_CONCURRENCY, BULLMQ_PROCESSES, bullmqDrain } from './bullmq.js';
import {
  GRAPHILE_CONCURRENCY,
  GRAPHILE_MODES,
  GRAPHILE_PROCESSES,
  graphileDrain,
  graphileProcesses,
  LOCAL_QUEUE_SIZE,
  type GraphileMode,
} from './graphile.js';
import { POLL_MS, type DrainRun } from './drain.js';
import { packageVersion } from './machine.js';
import { cpuOf, lhKey, ratesOf, ratioOf, runsOf, type Contender, type Figure, type Rounds } from './rounds.js';

const BULLMQ_KEY = 'bullmq';
const graphileKey = (mode: GraphileMode) => `graphile:${mode}`;

/** Leasehold with `processes` children at the run's claim_batch over a peer, within each round. */
export interface PeerRatio {
  leasehold: { processes: number; claim_batch: number };
  ratio: Stat;
}

export interface PeerRow {
  jobs_per_sec: Stat;
  jobs_per_sec_from_start: Stat;
  /** CPU ms per 1,000 jobs (user + system), from a tenth of the jobs done: the processes `method` names. */
  cpu_ms_per_1k_jobs: Stat;
}

export interface BullmqSection extends PeerRow {
  package: string;
  method: string;
  jobs: number;
  processes: number;
  concurrency: number;
  /** Leasehold's jobs/s over BullMQ's (section 1's rows). */
  ratios: PeerRatio[];
}

export interface GraphileSection {
  package: string;
  method: string;
  jobs: number;
  processes: number;
  concurrency: number;
  results: (PeerRow & { mode: GraphileMode; processes: number; server_cpu_ms_per_1k_jobs: Stat })[];
  /** Leasehold's jobs/s on PostgreSQL (section 9's rows) over each mode's. */
  ratios: (PeerRatio & { mode: GraphileMode })[];
  /** Leasehold's server CPU per job, the enqueue included, over each local-queue mode's (issue 53). */
  server_cpu_ratios: (PeerRatio & { mode: GraphileMode })[];
}

/** The leasehold children the targets name against each peer. */
const HELD_AGAINST = { bullmq: [1, 2], graphile: [2] };

function peerRatios(
  ctx: BenchContext,
  rounds: Rounds,
  children: number[],
  peerKey: string,
  figure?: Figure,
): PeerRatio[] {
  return children.flatMap((p) => {
    const ratio = ratioOf(rounds, lhKey(p, ctx.claimBatch), peerKey, figure);
    return ratio === undefined ? [] : [{ leasehold: { processes: p, claim_batch: ctx.claimBatch }, ratio }];
  });
}

const peerRow = (rounds: Rounds, key: string): PeerRow => ({
  ...ratesOf(rounds, key),
  cpu_ms_per_1k_jobs: cpuOf(rounds, key),
});

export const bullmqContender = (ctx: BenchContext): Contender => ({
  key: BULLMQ_KEY,
  label: `BullMQ concurrency ${BULLMQ_CONCURRENCY}`,
  drain: () => bullmqDrain(ctx),
});

/** Section 1's way of timing, with what is counted and how often. */
const timed = (counted: string, pollMs: number) =>
  `jobs/s from the first job seen done to the last (${counted} every ${pollMs} ms); \`from_start\` is from spawning the worker(s) to the last job`;

export function bullmqSection(ctx: BenchContext, rounds: Rounds): BullmqSection {
  return {
    package: `bullmq@${packageVersion('bullmq')}`,
    method:
      `${timed("the bench reads the queue's completed count", POLL_MS.sqlite)}; ` +
      `BullMQ's Worker, ${BULLMQ_PROCESSES} process at concurrency ${BULLMQ_CONCURRENCY}, no-op processor, default job options (completed jobs kept), ` +
      'on a redis-server started for the drain (no snapshots, no append-only file); CPU: the worker and redis-server',
    jobs: ctx.sizes.jobs,
    processes: BULLMQ_PROCESSES,
    concurrency: BULLMQ_CONCURRENCY,
    ...peerRow(rounds, BULLMQ_KEY),
    ratios: peerRatios(ctx, rounds, HELD_AGAINST.bullmq, BULLMQ_KEY),
  };
}

export const graphileContenders = (ctx: BenchContext): Contender[] =>
  GRAPHILE_MODES.map((mode) => ({
    key: graphileKey(mode),
    label: `graphile-worker ${graphileProcesses(mode)} × ${GRAPHILE_CONCURRENCY}, ${mode}`,
    drain: () => graphileDrain(ctx, mode),
  }));

const SERVER_CPU_PER_JOB = (run: DrainRun) => run.serverCpuWholeMsPer1k ?? Number.NaN;

export function graphileSection(ctx: BenchContext, rounds: Rounds): GraphileSection {
  return {
    package: `graphile-worker@${packageVersion('graphile-worker')}`,
    method:
      `${timed('a second connection counts the rows left: it deletes a job once done', POLL_MS.postgres)}; ` +
      `${GRAPHILE_PROCESSES} processes of graphile-worker's run() at concurrency ${GRAPHILE_CONCURRENCY}, no-op task, in a schema of its own; ` +
      `plain: its defaults (a fetch per job); local-queue: localQueue.size ${LOCAL_QUEUE_SIZE} a process, completeJobBatchDelay and failJobBatchDelay 0; ` +
      "local-queue-1: the same in 1 process; CPU: its worker processes; server CPU: the postmaster and its backends from before the enqueue to after the workers stopped, as section 9's `server, enqueue incl.`",
    jobs: ctx.sizes.jobs,
    processes: GRAPHILE_PROCESSES,
    concurrency: GRAPHILE_CONCURRENCY,
    results: GRAPHILE_MODES.map((mode) => ({
      mode,
      processes: graphileProcesses(mode),
      ...peerRow(rounds, graphileKey(mode)),
      server_cpu_ms_per_1k_jobs: summarize(runsOf(rounds, graphileKey(mode)).map(SERVER_CPU_PER_JOB)),
    })),
    ratios: GRAPHILE_MODES.flatMap((mode) =>
      peerRatios(ctx, rounds, HELD_AGAINST.graphile, graphileKey(mode)).map((r) => ({ mode, ...r })),
    ),
    server_cpu_ratios: GRAPHILE_MODES.filter((mode) => mode !== 'plain').flatMap((mode) =>
      peerRatios(ctx, rounds, HELD_AGAINST.graphile, graphileKey(mode), SERVER_CPU_PER_JOB).map((r) => ({
        mode,
        ...r,
      })),
    ),
  };
}
