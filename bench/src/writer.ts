/**
 * Section 21: children on one SQLite file, and its one writer (issues 43
 * and 52). Section 1's drain of no-op jobs with 1, 2, 4 and 8 children of
 * one class, and 8 classes of one child each, in rounds with plainjob's one
 * process, measuring what an added child costs: jobs/s (each step must not
 * be slower than the one before), CPU per job (8 children against 1, 1
 * child against plainjob), and how late the children's timers fire while
 * they work. With LEASEHOLD_BENCH_BASELINE set to another checkout (built),
 * the same drains run its `supervise` too, in the same rounds: this build
 * against that one.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchBaseline } from './baseline.js';
import { quantilesOverRuns, summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { plainjobDrain } from './plainjob.js';
import { ratioOf, runRounds, runsOf, CPU_PER_JOB, type Contender, type Figure } from './rounds.js';
import { leaseholdDrain, type LeaseholdDrainRun } from './throughput.js';

/** Children of one class, and (`classes`) classes of one child each. */
interface Shape {
  children: number;
  classes: number;
}
const SHAPES: readonly Shape[] = [
  { children: 1, classes: 1 },
  { children: 2, classes: 1 },
  { children: 4, classes: 1 },
  { children: 8, classes: 1 },
  { children: 8, classes: 8 },
];
const PLAINJOB = 'plainjob:1';
/**
 * Section 1's jobs, times this, and the per-job figures (jobs/s and CPU)
 * from MARK_AT of them done: each of 8 children must be past its warm-up
 * (its JIT, its heap), as a long-lived child is. On 2 cores, 8 children's
 * CPU per job fell until each had run about 10,000 jobs (docs/performance.md,
 * "Eight children's warm-up"); over 20,000 jobs warm-up alone doubled it.
 */
const JOBS_TIMES = 15;
const MARK_AT = 1 / 3;
const CLAIM_BATCH = 64;
/** The children's interval timer: how often it fires, and how recently a job must have run for a firing to count. */
const TIMER_MS = 5;
const BUSY_WINDOW_MS = 50;
const LATENESS_PREFIX = 'lateness-';
/** Jobs/s past the warm-up: from MARK_AT of the jobs done. */
const FROM_MARK: Figure = (run) => run.jobsPerSecFromMark;

interface Arm {
  name: string;
  supervise?: string;
}

export interface WriterRow {
  arm: string;
  children: number;
  /** 1: every child serves the one class; as many as children: one child a class. */
  classes: number;
  jobs_per_sec: Stat;
  cpu_ms_per_1k_jobs: Stat;
  /** How late the children's timer fired while jobs ran (ms), pooled over the children of a run. */
  timer_late_ms: Record<'p50' | 'p99' | 'max', Stat>;
}

export interface WriterSection {
  method: string;
  jobs: number;
  results: WriterRow[];
  plainjob: { jobs_per_sec: Stat; cpu_ms_per_1k_jobs: Stat };
  /**
   * Per arm, within each round, jobs/s: 2 children / 1, 4 / 2, 8 / 4, and 8
   * classes of one child / one class of 8; CPU per job: 8 children / 1, and
   * 1 child / plainjob's 1 process.
   */
  scaling: {
    arm: string;
    two_over_one: Stat;
    four_over_two: Stat;
    eight_over_four: Stat;
    classes_over_one_class: Stat;
    cpu_eight_over_one: Stat;
    cpu_one_over_plainjob: Stat;
  }[];
  /** This build's CPU per job over the baseline's, per shape, within each round. */
  cpu_over_baseline?: { children: number; classes: number; ratio: Stat }[];
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

interface WriterDrainRun extends LeaseholdDrainRun {
  late: number[];
}

function arms(): Arm[] {
  const baseline = benchBaseline();
  return [
    { name: 'this build' },
    ...(baseline ? [{ name: `baseline (${baseline.folder})`, supervise: baseline.supervise }] : []),
  ];
}

const keyOf = (arm: Arm, { children, classes }: Shape) => `${arm.name}:${children}:${classes}`;
const shapeLabel = ({ children, classes }: Shape) =>
  classes === 1 ? `${children} child(ren)` : `${classes} classes of ${children / classes} child`;

export async function runWriter(ctx: BenchContext): Promise<WriterSection> {
  const all = arms();
  const contenders: Contender[] = all.flatMap((arm) =>
    SHAPES.map((shape) => ({
      key: keyOf(arm, shape),
      label: `${arm.name}, ${shapeLabel(shape)}`,
      drain: async (): Promise<WriterDrainRun> => {
        let dir = '';
        const handler = (drainDir: string) => writeLatenessHandler((dir = drainDir));
        const perClass = shape.children / shape.classes;
        const run = await leaseholdDrain(ctx, perClass, CLAIM_BATCH, 'sqlite', {
          jobs: ctx.sizes.jobs * JOBS_TIMES,
          markAt: MARK_AT,
          handler,
          supervise: arm.supervise,
          ...(shape.classes === 1 ? {} : { classes: shape.classes }),
        });
        return { ...run, late: latenessIn(dir) };
      },
    })),
  );
  contenders.push({
    key: PLAINJOB,
    label: 'plainjob, 1 process',
    drain: () => plainjobDrain(ctx, 1, ctx.sizes.jobs * JOBS_TIMES, MARK_AT),
  });
  const rounds = await runRounds(ctx, 'writer', contenders);
  const [mine, baseline] = all;
  const [one, two, four, eight, eightClasses] = SHAPES as [Shape, Shape, Shape, Shape, Shape];
  const plainjobRuns = runsOf(rounds, PLAINJOB);
  return {
    method:
      `section 1's drain on SQLite, ${ctx.sizes.jobs * JOBS_TIMES} no-op jobs, claim_batch ${CLAIM_BATCH}, 1, 2, 4 and 8 children of one class and 8 classes of one child ` +
      `(the jobs dealt among them), and plainjob with 1 process, in rounds; ` +
      `each child runs a ${TIMER_MS} ms interval timer in its handler's module and keeps how late each firing was, counting only firings ` +
      `within ${BUSY_WINDOW_MS} ms of a job; jobs/s, and CPU per 1,000 jobs (the supervisor's and the children's), from ${Math.round(MARK_AT * 100)}% of the jobs done, once every child is ready` +
      (baseline === undefined ? '' : `; the baseline is another build's supervise, run in the same rounds`),
    jobs: ctx.sizes.jobs * JOBS_TIMES,
    results: all.flatMap((arm) =>
      SHAPES.map((shape) => {
        const runs = runsOf<WriterDrainRun>(rounds, keyOf(arm, shape));
        return {
          arm: arm.name,
          ...shape,
          jobs_per_sec: summarize(runs.map((run) => FROM_MARK(run) ?? Number.NaN)),
          cpu_ms_per_1k_jobs: summarize(runs.map((run) => run.supervisorCpuMsPer1k + run.childrenCpuMsPer1k)),
          timer_late_ms: quantilesOverRuns(
            runs.map((run) => (run.late.length === 0 ? [0] : run.late)),
            ['p50', 'p99', 'max'],
            1,
          ),
        };
      }),
    ),
    plainjob: {
      jobs_per_sec: summarize(plainjobRuns.map((run) => FROM_MARK(run) ?? Number.NaN)),
      cpu_ms_per_1k_jobs: summarize(plainjobRuns.map((run) => run.cpuMsPer1k ?? Number.NaN)),
    },
    scaling: all.map((arm) => ({
      arm: arm.name,
      two_over_one: ratioOf(rounds, keyOf(arm, two), keyOf(arm, one), FROM_MARK)!,
      four_over_two: ratioOf(rounds, keyOf(arm, four), keyOf(arm, two), FROM_MARK)!,
      eight_over_four: ratioOf(rounds, keyOf(arm, eight), keyOf(arm, four), FROM_MARK)!,
      classes_over_one_class: ratioOf(rounds, keyOf(arm, eightClasses), keyOf(arm, eight), FROM_MARK)!,
      cpu_eight_over_one: ratioOf(rounds, keyOf(arm, eight), keyOf(arm, one), CPU_PER_JOB)!,
      cpu_one_over_plainjob: ratioOf(rounds, keyOf(arm, one), PLAINJOB, CPU_PER_JOB)!,
    })),
    ...(baseline === undefined
      ? {}
      : {
          cpu_over_baseline: SHAPES.map((shape) => ({
            ...shape,
            ratio: ratioOf(rounds, keyOf(mine!, shape), keyOf(baseline, shape), CPU_PER_JOB)!,
          })),
        }),
  };
}

/** Issues 43's and 52's targets, as checkTargets' arguments: id, what, the figure, whether it is met. */
export function writerTargets(
  section: WriterSection | undefined,
): [string, string, number | undefined, (value: number) => boolean][] {
  const own = section?.scaling[0];
  const lateAt = (children: number) =>
    section?.results.find((r) => r.arm === own?.arm && r.children === children && r.classes === 1)?.timer_late_ms.p99
      .median;
  const atLeast = (floor: number) => (v: number) => v >= floor;
  const atMost = (ceiling: number) => (v: number) => v <= ceiling;
  return [
    ['43-scale-2', 'no-op jobs: 2 children >= 0.95x 1 child (within a round)', own?.two_over_one.median, atLeast(0.95)],
    [
      '43-scale-4',
      'no-op jobs: 4 children >= 0.95x 2 children (within a round)',
      own?.four_over_two.median,
      atLeast(0.95),
    ],
    [
      '52-scale-8',
      'no-op jobs: 8 children >= 0.95x 4 children (within a round)',
      own?.eight_over_four.median,
      atLeast(0.95),
    ],
    [
      '52-classes',
      'no-op jobs: 8 classes of 1 child >= 0.95x 1 class of 8 children (within a round)',
      own?.classes_over_one_class.median,
      atLeast(0.95),
    ],
    [
      '52-cpu-8',
      'CPU per job: 8 children <= 1.3x 1 child (within a round)',
      own?.cpu_eight_over_one.median,
      atMost(1.3),
    ],
    [
      '52-cpu-plainjob',
      'CPU per job: 1 child <= 0.85x plainjob 1 process (within a round)',
      own?.cpu_one_over_plainjob.median,
      atMost(0.85),
    ],
    ['43-timer-late', "the children's timer lateness p99 with 4 children busy <= 20 ms", lateAt(4), atMost(20)],
    ['52-timer-late', "the children's timer lateness p99 with 8 children busy <= 20 ms", lateAt(8), atMost(20)],
  ];
}
