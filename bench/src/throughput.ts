/** Sections 1, 9, 12 and 17: jobs (no-op but in 12 and 17) through a real supervisor and its children, with the CPU and bytes they cost per job. */
import { pollDrain, serverCpuTicks, summarize, writtenBytes, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { benchDatabase, type Driver, type RowCounter } from './database.js';
import {
  DEFAULT_MARK,
  drainRates,
  msPer1k,
  POLL_MS,
  sinceMark,
  ticksOf,
  withServerCpu,
  type DrainRun,
} from './drain.js';
import { lhKey, runsOf, type Contender, type RawSection, type Rounds } from './rounds.js';
import {
  fillQueue,
  classNames,
  openBenchQueue,
  PEAK_RUNNING,
  SUCCEEDED_COUNT,
  SupervisorRun,
  writeConfig,
  writeNoopHandler,
  writeSleepHandler,
  writeWorkHandler,
  type PayloadOf,
} from './leasehold.js';

export interface LeaseholdDrainRun extends DrainRun {
  attemptsPerJob: number;
  eventsPerJob: number;
  /**
   * CPU (user + system) per 1,000 jobs from the moment the mark's share of
   * the jobs (a tenth unless the workload says) were done and every child
   * had said it was ready (start-up left out) to the last, of the
   * supervisor and of its children together.
   */
  supervisorCpuMsPer1k: number;
  childrenCpuMsPer1k: number;
  /** PostgreSQL: the same for every process of the database server on this machine. */
  serverCpuMsPer1k?: number;
  /**
   * Bytes written per job over the same stretch. SQLite: what the supervisor
   * and its children passed to write() (WAL frames, checkpoints, a little
   * IPC and log). PostgreSQL: the WAL the server generated (its WAL position).
   */
  bytesWrittenPerJob: number;
  /** With a `work` workload: the most jobs seen running at once in a child (PEAK_RUNNING). */
  peakRunning?: number;
}

/** The page a write is counted in: SQLite's page, PostgreSQL's WAL block. */
export const PAGE_BYTES: Record<Driver, number> = { sqlite: 4096, postgres: 8192 };
/** The server's WAL position in bytes: exact at once, where pg_stat_wal is flushed about once a second. */
const WAL_BYTES = `SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint`;

/** What a drain runs: section 1's is `ctx.sizes.jobs` no-op jobs at the class's default concurrency. */
export interface Workload {
  jobs?: number;
  /** classes[].concurrency (unset: the default). */
  concurrency?: number;
  /** Each job sleeps this long in its handler (0: the no-op handler). */
  jobMs?: number;
  /** Section 17: writeWorkHandler's jobs, that await or burn jobMs, and the run's peakRunning. */
  work?: 'await' | 'burn';
  /** Section 20: a handler of the section's own (written into the drain's folder), and the `supervise` binary to run. */
  handler?: (dir: string) => string;
  supervise?: string;
  /** Section 22: the supervisor's environment (its children inherit it). */
  env?: NodeJS.ProcessEnv;
  /** Section 21: this many classes alike, each with the drain's `processes` children, the jobs dealt among them. */
  classes?: number;
  /** Section 24: this many supervisors on the queue, each a host of its own (LEASEHOLD_HOST), each with `processes` children. */
  hosts?: number;
  /** Section 21: the share of the jobs done where the per-job figures start (DEFAULT_MARK unless given). */
  markAt?: number;
}

/** The handler a workload's jobs run, and their payload (none: `{ n }`). */
function handlerOf(workload: Workload): { write: (dir: string) => string; payloadOf?: PayloadOf } {
  const ms = workload.jobMs ?? 0;
  if (workload.handler !== undefined) return { write: workload.handler };
  if (workload.work !== undefined)
    return { write: writeWorkHandler, payloadOf: (n) => ({ n, ms, burn: workload.work === 'burn' }) };
  return ms > 0 ? { write: writeSleepHandler, payloadOf: (n) => ({ n, ms }) } : { write: writeNoopHandler };
}

export async function leaseholdDrain(
  ctx: BenchContext,
  processes: number,
  claimBatch: number,
  driver: Driver = 'sqlite',
  workload: Workload = {},
): Promise<LeaseholdDrainRun> {
  const jobs = workload.jobs ?? ctx.sizes.jobs;
  const jobMs = workload.jobMs ?? 0;
  const label =
    (workload.concurrency === undefined ? '' : `-c${workload.concurrency}-${jobMs}ms`) +
    (workload.classes === undefined ? '' : `-k${workload.classes}`) +
    (workload.hosts === undefined ? '' : `-h${workload.hosts}`);
  const dir = ctx.dirs.make(`tp-${driver}-p${processes}-b${claimBatch}${label}`);
  const database = benchDatabase(ctx, dir, driver);
  try {
    const { write, payloadOf } = handlerOf(workload);
    const handler = write(dir);
    // A folder (config, log, output) a host.
    const hosts = Array.from({ length: workload.hosts ?? 1 }, (_, i) => {
      const hostDir = workload.hosts === undefined ? dir : ctx.dirs.make(`tp-${driver}-host${i + 1}`);
      const config = writeConfig(hostDir, {
        database: database.url,
        handler,
        processes,
        claimBatch,
        concurrency: workload.concurrency,
        classes: workload.classes,
      });
      return { config, dir: hostDir, name: workload.hosts === undefined ? undefined : `bench-host-${i + 1}` };
    });
    const children = processes * (workload.classes ?? 1) * hosts.length;
    const enqueueAndDrain = async () => {
      const queue = await openBenchQueue(database.url);
      await fillQueue(queue, jobs, undefined, payloadOf, classNames(workload.classes));
      await queue.close();
      return await drain(ctx, hosts, { jobs, children }, await database.counter(), driver, workload);
    };
    return driver === 'postgres' ? await withServerCpu(jobs, enqueueAndDrain) : await enqueueAndDrain();
  } finally {
    await database.dispose();
  }
}

/** A supervisor of a drain: its config, its folder, and its host name (unset: the machine's). */
interface Host {
  config: string;
  dir: string;
  name: string | undefined;
}

async function drain(
  ctx: BenchContext,
  hosts: Host[],
  { jobs, children }: { jobs: number; children: number },
  counter: RowCounter,
  driver: Driver,
  workload: Workload,
): Promise<LeaseholdDrainRun> {
  const countPeak = workload.work !== undefined;
  const started = performance.now();
  const supervisors = hosts.map((host) =>
    SupervisorRun.start(
      ctx.processes,
      host.config,
      host.dir,
      workload.supervise,
      host.name === undefined ? workload.env : { ...workload.env, LEASEHOLD_HOST: host.name },
    ),
  );
  const supervisorPids = new Set(supervisors.map((s) => s.pid));
  const pids = () => supervisors.flatMap((s) => [s.pid, ...s.process.noteDescendants()]);
  const ticksNow = () => ticksOf(pids());
  // Bytes written: by the queue's processes (SQLite), or the server's WAL (PostgreSQL).
  const writtenNow = async () =>
    driver === 'postgres' ? counter.count(WAL_BYTES)() : new Map(pids().map((pid) => [pid, writtenBytes(pid) ?? 0]));
  // The server's CPU: its backends come and go, and serverCpuTicks counts those that ended too.
  const serverTicks = () => (driver === 'postgres' ? serverCpuTicks() : 0);
  // Until the mark: from the start, which is what a drain that ends between two polls is measured from (0/0 per job otherwise).
  let writtenAtMark: ReturnType<typeof writtenNow> = writtenNow();
  writtenAtMark.catch(() => undefined); // replaced unread when the mark is reached: its failure must not go unhandled
  let serverAtMark = serverTicks();
  // CPU ticks of the supervisor and of each child once the mark's share of the jobs are done.
  let atMark = ticksNow();
  const mark = { done: 0, ms: 0 };
  try {
    const timing = await pollDrain(counter.count(SUCCEEDED_COUNT), jobs, {
      intervalMs: POLL_MS[driver],
      timeoutMs: ctx.sizes.drainTimeoutMs,
      alive: () => supervisors.map((s) => s.deadReason()).find((reason) => reason !== undefined),
      mark: {
        atDone: Math.ceil(jobs * (workload.markAt ?? DEFAULT_MARK)),
        // With more children than cores, the last ones are still starting when a tenth is done: start-up is not per job.
        also: () => supervisors.reduce((sum, s) => sum + s.log('CHILD_READY').length, 0) >= children,
        reached: (done) => {
          if (done >= jobs) return;
          atMark = ticksNow();
          writtenAtMark = writtenNow();
          serverAtMark = serverTicks();
          Object.assign(mark, { done, ms: performance.now() });
        },
      },
    });
    // Read before the stop: the children are still alive.
    const atEnd = ticksNow();
    const serverAtEnd = serverTicks();
    const written = sinceMark(await writtenAtMark, await writtenNow());
    const used = (pid: number) => msPer1k((atEnd.get(pid) ?? 0) - (atMark.get(pid) ?? 0), jobs - mark.done);
    const supervisorCpu = [...supervisorPids].reduce((sum, pid) => sum + used(pid), 0);
    const childrenCpu = [...atEnd.keys()]
      .filter((pid) => !supervisorPids.has(pid))
      .reduce((sum, pid) => sum + used(pid), 0);
    const attempts = await counter.count('SELECT count(*) FROM job_attempts')();
    const events = await counter.count('SELECT count(*) FROM job_events')();
    return {
      ...drainRates(timing, jobs, started, mark),
      attemptsPerJob: attempts / jobs,
      eventsPerJob: events / jobs,
      supervisorCpuMsPer1k: supervisorCpu,
      childrenCpuMsPer1k: childrenCpu,
      cpuMsPer1k: supervisorCpu + childrenCpu,
      ...(driver === 'postgres'
        ? { serverCpuMsPer1k: msPer1k(sinceMark(serverAtMark, serverAtEnd), jobs - mark.done) }
        : {}),
      bytesWrittenPerJob: written / (jobs - mark.done),
      ...(countPeak ? { peakRunning: await counter.count(PEAK_RUNNING)() } : {}),
    };
  } finally {
    await counter.close();
    await Promise.all(supervisors.map((s) => s.stop()));
  }
}

export interface ThroughputRow {
  processes: number;
  claim_batch: number;
  jobs_per_sec: Stat;
  jobs_per_sec_from_start: Stat;
  attempts_per_job: number;
  events_per_job: number;
  /** KiB written per job, and that in pages (PAGE_BYTES): see LeaseholdDrainRun.bytesWrittenPerJob. */
  written_kib_per_job: Stat;
  pages_written_per_job: Stat;
  /** CPU ms per 1,000 jobs (user + system, spawn to last job): where the work happens. */
  /** server: PostgreSQL's from a tenth of the jobs done; server_whole: the enqueue included (serverCpuWholeMsPer1k). */
  cpu_ms_per_1k_jobs: { supervisor: Stat; children: Stat; server?: Stat; server_whole?: Stat };
}

export interface ThroughputSection {
  method: string;
  jobs: number;
  claim_batches: number[];
  results: ThroughputRow[];
  /** SQLite: 4 children over 2 at the default claim_batch, within each round (more processes must not cost throughput). */
  four_over_two_children?: Stat;
  /** PostgreSQL: the raw ceiling run in the same rounds, and leasehold over it within each round. */
  raw?: RawSection;
}

/** The claim batches of the leasehold rows: 1, and the run's `--claim-batch`. */
export function runBatches(ctx: BenchContext): number[] {
  return [...new Set([1, ctx.claimBatch])];
}

/** Leasehold at every processes × claim_batch of the run, as the contenders of a round. */
export function leaseholdContenders(ctx: BenchContext, driver: Driver): Contender[] {
  return ctx.sizes.processes.flatMap((p) =>
    runBatches(ctx).map((b) => ({
      key: lhKey(p, b),
      label: `leasehold ${p} children, claim_batch ${b}`,
      drain: () => leaseholdDrain(ctx, p, b, driver),
    })),
  );
}

/** One row per processes × claim_batch: every figure summarised over the rounds. */
export function throughputRows(ctx: BenchContext, rounds: Rounds, driver: Driver): ThroughputRow[] {
  return ctx.sizes.processes.flatMap((p) =>
    runBatches(ctx).map((b) => throughputRow(p, b, runsOf<LeaseholdDrainRun>(rounds, lhKey(p, b)), driver)),
  );
}

/** The runs of one configuration, summarised. */
export function throughputRow(
  processes: number,
  claimBatch: number,
  runs: LeaseholdDrainRun[],
  driver: Driver,
): ThroughputRow {
  const of = (pick: (run: LeaseholdDrainRun) => number, digits = 0) => summarize(runs.map(pick), digits);
  const server = runs.map((run) => run.serverCpuMsPer1k).filter((ms) => ms !== undefined);
  const serverWhole = runs.map((run) => run.serverCpuWholeMsPer1k).filter((ms) => ms !== undefined);
  return {
    processes,
    claim_batch: claimBatch,
    jobs_per_sec: of((run) => run.jobsPerSec),
    jobs_per_sec_from_start: of((run) => run.jobsPerSecFromStart),
    attempts_per_job: of((run) => run.attemptsPerJob, 2).median,
    events_per_job: of((run) => run.eventsPerJob, 2).median,
    written_kib_per_job: of((run) => run.bytesWrittenPerJob / 1024, 2),
    pages_written_per_job: of((run) => run.bytesWrittenPerJob / PAGE_BYTES[driver], 2),
    cpu_ms_per_1k_jobs: {
      supervisor: of((run) => run.supervisorCpuMsPer1k),
      children: of((run) => run.childrenCpuMsPer1k),
      ...(server.length > 0 ? { server: summarize(server) } : {}),
      ...(serverWhole.length > 0 ? { server_whole: summarize(serverWhole) } : {}),
    },
  };
}
