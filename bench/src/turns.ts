/**
 * Section 21: write turns on SQLite (issue 43). Section 1's drain of no-op
 * jobs with 1, 2 and 4 children, in rounds, measuring what a child's wait for
 * the write lock costs: jobs/s (4 children must not be slower than 2, nor 2
 * than 1), CPU per job, and how late the children's timers fire while they
 * work (a wait in SQLite's busy handler stops the event loop). With
 * LEASEHOLD_BENCH_BASELINE set to another checkout (built), the same drains
 * run its `supervise` too, in the same rounds: this build against that one.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quantilesOverRuns, summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { ratioOf, runRounds, runsOf, CPU_PER_JOB } from './rounds.js';
import { leaseholdDrain, type LeaseholdDrainRun } from './throughput.js';

const CHILDREN = [1, 2, 4] as const;
const CLAIM_BATCH = 64;
/** The children's interval timer: how often it fires, and how recently a job must have run for a firing to count. */
const TIMER_MS = 5;
const BUSY_WINDOW_MS = 50;
const LATENESS_PREFIX = 'lateness-';

interface Arm {
  name: string;
  supervise?: string;
}

export interface TurnsRow {
  arm: string;
  children: number;
  jobs_per_sec: Stat;
  cpu_ms_per_1k_jobs: Stat;
  /** How late the children's timer fired while jobs ran (ms), pooled over the children of a run. */
  timer_late_ms: Record<'p50' | 'p99' | 'max', Stat>;
}

export interface TurnsSection {
  method: string;
  jobs: number;
  results: TurnsRow[];
  /** Per arm, within each round: 4 children / 2, and 2 / 1. */
  scaling: { arm: string; four_over_two: Stat; two_over_one: Stat }[];
  /** This build's CPU per job over the baseline's, per number of children, within each round. */
  cpu_over_baseline?: { children: number; ratio: Stat }[];
}

/**
 * A no-op handler whose module, once per child, runs an interval timer and
 * keeps how late each firing was while jobs ran; the child writes them to
 * `dir` when it exits.
 */
function writeLatenessHandler(dir: string): string {
  const file = join(dir, 'lateness.mjs');
  writeFileSync(
    file,
    `import { writeFileSync } from 'node:fs';
const late = [];
let last = performance.now();
let busyUntil = 0;
setInterval(() => {
  const now = performance.now();
  if (now < busyUntil) late.push(Math.max(0, now - last - ${TIMER_MS}));
  last = now;
}, ${TIMER_MS}).unref();
process.on('exit', () => writeFileSync(${JSON.stringify(join(dir, LATENESS_PREFIX))} + process.pid + '.json', JSON.stringify(late)));
export default async function handler() {
  busyUntil = performance.now() + ${BUSY_WINDOW_MS};
  return null;
}
`,
  );
  return file;
}

/** Every child's lateness samples of a drain, pooled. */
function latenessIn(dir: string): number[] {
  return readdirSync(dir)
    .filter((name) => name.startsWith(LATENESS_PREFIX))
    .flatMap((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as number[]);
}

interface TurnsDrainRun extends LeaseholdDrainRun {
  late: number[];
}

function arms(): Arm[] {
  const baseline = process.env.LEASEHOLD_BENCH_BASELINE;
  return [
    { name: 'this build' },
    ...(baseline ? [{ name: `baseline (${baseline})`, supervise: join(baseline, 'dist/supervisor/main.js') }] : []),
  ];
}

const keyOf = (arm: Arm, children: number) => `${arm.name}:${children}`;

export async function runTurns(ctx: BenchContext): Promise<TurnsSection> {
  const all = arms();
  const rounds = await runRounds(
    ctx,
    'turns',
    all.flatMap((arm) =>
      CHILDREN.map((children) => ({
        key: keyOf(arm, children),
        label: `${arm.name}, ${children} child(ren)`,
        drain: async (): Promise<TurnsDrainRun> => {
          let dir = '';
          const handler = (drainDir: string) => writeLatenessHandler((dir = drainDir));
          const run = await leaseholdDrain(ctx, children, CLAIM_BATCH, 'sqlite', { handler, supervise: arm.supervise });
          return { ...run, late: latenessIn(dir) };
        },
      })),
    ),
  );
  const [mine, baseline] = all;
  return {
    method:
      `section 1's drain on SQLite, ${ctx.sizes.jobs} no-op jobs, claim_batch ${CLAIM_BATCH}, 1, 2 and 4 children, in rounds; ` +
      `each child runs a ${TIMER_MS} ms interval timer in its handler's module and keeps how late each firing was, counting only firings ` +
      `within ${BUSY_WINDOW_MS} ms of a job; CPU per 1,000 jobs is the supervisor's and the children's from the 10% mark` +
      (baseline === undefined ? '' : `; the baseline is another build's supervise, run in the same rounds`),
    jobs: ctx.sizes.jobs,
    results: all.flatMap((arm) =>
      CHILDREN.map((children) => {
        const runs = runsOf<TurnsDrainRun>(rounds, keyOf(arm, children));
        return {
          arm: arm.name,
          children,
          jobs_per_sec: summarize(runs.map((run) => run.jobsPerSec)),
          cpu_ms_per_1k_jobs: summarize(runs.map((run) => run.supervisorCpuMsPer1k + run.childrenCpuMsPer1k)),
          timer_late_ms: quantilesOverRuns(
            runs.map((run) => (run.late.length === 0 ? [0] : run.late)),
            ['p50', 'p99', 'max'],
            1,
          ),
        };
      }),
    ),
    scaling: all.map((arm) => ({
      arm: arm.name,
      four_over_two: ratioOf(rounds, keyOf(arm, 4), keyOf(arm, 2))!,
      two_over_one: ratioOf(rounds, keyOf(arm, 2), keyOf(arm, 1))!,
    })),
    ...(baseline === undefined
      ? {}
      : {
          cpu_over_baseline: CHILDREN.map((children) => ({
            children,
            ratio: ratioOf(rounds, keyOf(mine!, children), keyOf(baseline, children), CPU_PER_JOB)!,
          })),
        }),
  };
}

/** Issue 43's targets, as checkTargets' arguments: id, what, the figure, whether it is met. */
export function turnsTargets(
  section: TurnsSection | undefined,
): [string, string, number | undefined, (value: number) => boolean][] {
  const own = section?.scaling[0];
  const late4 = section?.results.find((r) => r.arm === own?.arm && r.children === 4)?.timer_late_ms.p99.median;
  return [
    [
      '43-scale-4',
      'no-op jobs: 4 children >= 0.95x 2 children (within a round)',
      own?.four_over_two.median,
      (v) => v >= 0.95,
    ],
    [
      '43-scale-2',
      'no-op jobs: 2 children >= 0.95x 1 child (within a round)',
      own?.two_over_one.median,
      (v) => v >= 0.95,
    ],
    ['43-timer-late', "the children's timer lateness p99 with 4 children busy <= 20 ms", late4, (v) => v <= 20],
  ];
}
