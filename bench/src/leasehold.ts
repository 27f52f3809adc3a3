/**
 * Running leasehold the way an operator does: a generated queue.yaml, a
 * handler file, `node dist/supervisor/main.js --config F` as a real
 * process, and what its log and the workers registry say.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../dist/src/config/load.js';
import { Queue } from '../../dist/src/queue/queue.js';
import { openStore } from '../../dist/src/store/open.js';
import type { Store, WorkerRow } from '../../dist/src/store/types.js';
import { isAlive, waitFor } from './common.js';
import type { BenchContext } from './context.js';
import { benchDatabase, type BenchDatabase, type Driver } from './database.js';
import { SUPERVISE, type Managed, type ProcessRegistry } from './processes.js';

export const BENCH_CLASS = 'bench';
/** Bulk enqueues go in chunks of this many jobs (one transaction each). */
export const FILL_CHUNK = 10_000;

export interface ClassOptions {
  /** The `database:` setting (BenchDatabase.url). */
  database: string;
  handler: string;
  processes: number;
  claimBatch?: number;
  /** classes[].concurrency: jobs one child runs at once. */
  concurrency?: number;
  pollSeconds?: number;
  /** Extra YAML lines for the class (already indented by four spaces). */
  extra?: string[];
  /** How many classes alike, each with `processes` children (default 1: BENCH_CLASS alone; more: classNames). */
  classes?: number;
}

/** The bench's classes in a config of `count` alike: BENCH_CLASS alone, or bench-0 to bench-(count - 1). */
export const classNames = (count = 1): string[] =>
  count === 1 ? [BENCH_CLASS] : Array.from({ length: count }, (_, i) => `${BENCH_CLASS}-${i}`);

/** A queue.yaml in `dir` with one class on `database`; every field not given keeps its default. */
export function writeConfig(dir: string, options: ClassOptions): string {
  const lines = [
    `database: ${JSON.stringify(options.database)}`,
    `log: { level: info, file: ${join(dir, 'supervisor.log')} }`,
    'classes:',
  ];
  for (const name of classNames(options.classes)) {
    lines.push(`  - name: ${name}`, `    handler: ${options.handler}`, `    processes: ${options.processes}`);
    if (options.claimBatch !== undefined) lines.push(`    claim_batch: ${options.claimBatch}`);
    if (options.concurrency !== undefined) lines.push(`    concurrency: ${options.concurrency}`);
    if (options.pollSeconds !== undefined) lines.push(`    poll_seconds: ${options.pollSeconds}`);
    lines.push(...(options.extra ?? []));
  }
  const file = join(dir, 'queue.yaml');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** The settings that shape a measurement, as the config loader resolves them (defaults included). */
export function describeClass(configFile: string): string {
  const cls = loadConfig(configFile).classes[0];
  if (cls === undefined) return 'no class';
  return (
    `processes ${cls.processes}, concurrency ${cls.concurrency}, claim_batch ${cls.claim_batch}, poll_seconds ${cls.poll_seconds}, lease_seconds ${cls.lease_seconds}, ` +
    `backoff ${cls.backoff.base_seconds}-${cls.backoff.max_seconds} s${cls.backoff.jitter ? ' with jitter' : ''}`
  );
}

/**
 * A handler module `name`.mjs in `dir` whose default export runs `body` (with
 * `job` and a promise `sleep` in scope) and returns `returns`; `scope`: lines
 * at the module's top level, kept across the jobs of a child.
 */
function writeHandler(dir: string, name: string, body: string, { scope = '', returns = 'null' } = {}): string {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(
    file,
    `import { setTimeout as sleep } from 'node:timers/promises';\n${scope}export default async function handler(job) {\n  ${body}\n  return ${returns};\n}\n`,
  );
  return file;
}

/** A handler that does nothing and returns null. */
export const writeNoopHandler = (dir: string) => writeHandler(dir, 'noop', '');

/** A handler that sleeps the job's `payload.ms` (0 or none: returns at once). */
export const writeSleepHandler = (dir: string) =>
  writeHandler(dir, 'sleep', 'const ms = job.payload?.ms ?? 0;\n  if (ms > 0) await sleep(ms);');

/**
 * Section 17's handler: sleeps `payload.ms`, or with `payload.burn` spends
 * that much CPU in a busy loop; it counts its calls in flight in its child
 * and returns the most seen at once so far (PEAK_RUNNING reads the highest).
 */
export const writeWorkHandler = (dir: string) =>
  writeHandler(
    dir,
    'work',
    `running++;
  peak = Math.max(peak, running);
  try {
    if (job.payload.burn) for (const until = cpuMicros() + job.payload.ms * 1000; cpuMicros() < until; );
    else await sleep(job.payload.ms);
  } finally {
    running--;
  }`,
    {
      scope:
        'let running = 0;\nlet peak = 0;\nconst cpuMicros = () => {\n  const used = process.cpuUsage();\n  return used.user + used.system;\n};\n',
      returns: 'peak',
    },
  );

/** A handler that sleeps `ms` on a job's first attempt only (later attempts return at once). */
export const writeSleepFirstAttemptHandler = (dir: string, ms: number) =>
  writeHandler(dir, 'sleep-first', `if (job.attempt === 1) await sleep(${ms});`);

/** The payload of the n-th job (from 0) a fill enqueues. */
export type PayloadOf = (n: number) => Record<string, unknown>;

/** Call `add` with the numbers 0 to `count` - 1 in order, `chunk` at a time (a queue's bulk add each). */
export async function inChunks(count: number, add: (ns: number[]) => unknown, chunk = FILL_CHUNK): Promise<void> {
  for (let done = 0; done < count; done += chunk)
    await add(Array.from({ length: Math.min(chunk, count - done) }, (_, i) => done + i));
}

/**
 * Enqueue `count` jobs (payload `{ n }` unless `payloadOf` says) with
 * enqueueMany, FILL_CHUNK per call, in id order, dealt in turn to `classes`;
 * returns the seconds it took.
 */
export async function fillQueue(
  queue: Queue,
  count: number,
  chunk = FILL_CHUNK,
  payloadOf: PayloadOf = (n) => ({ n }),
  classes = [BENCH_CLASS],
): Promise<number> {
  const started = performance.now();
  await inChunks(
    count,
    (ns) => queue.enqueueMany(ns.map((n) => ({ class: classes[n % classes.length]!, payload: payloadOf(n) }))),
    chunk,
  );
  return (performance.now() - started) / 1000;
}

export async function openBenchQueue(database: string): Promise<Queue> {
  return new Queue(await openStore(database), { actor: 'bench' });
}

/** The most calls of writeWorkHandler's seen running at once in a child, over the drain. */
export const PEAK_RUNNING = 'SELECT max(CAST(result AS INTEGER)) FROM jobs';
/** Through the jobs_finished index (every finished job has its finished_at): a third of a count by status alone. */
export const SUCCEEDED_COUNT = `SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED' AND finished_at IS NOT NULL`;
/** Jobs in a final state, whichever: a drain that must not wait forever on a job that failed. */
export const FINISHED_COUNT = `SELECT count(*) FROM jobs WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED')`;

export interface LogLine {
  ts: string;
  event?: string;
  pid?: number;
  [key: string]: unknown;
}

/** A supervisor started by the benchmark: its process, its log, its children in the registry. */
export class SupervisorRun {
  readonly startedAt = Date.now();
  private supervisorId: string | undefined;

  private constructor(
    readonly process: Managed,
    readonly dir: string,
  ) {}

  /** `supervise`: the binary to run, this build's by default (section 20 runs another build's beside it); `env`: its environment. */
  static start(
    registry: ProcessRegistry,
    configFile: string,
    dir: string,
    supervise = SUPERVISE,
    env?: NodeJS.ProcessEnv,
  ): SupervisorRun {
    const managed = registry.startNode('supervisor', supervise, ['--config', configFile], {
      output: join(dir, 'supervisor.out'),
      env,
    });
    return new SupervisorRun(managed, dir);
  }

  get pid(): number {
    return this.process.pid;
  }

  /** Undefined while it runs; why not, once it is gone (for polls that must not wait on a dead supervisor). */
  deadReason(): string | undefined {
    return this.process.running ? undefined : `the supervisor exited early; see ${join(this.dir, 'supervisor.out')}`;
  }

  /** Its live children in the workers registry (its own row found by pid). */
  async children(store: Store): Promise<WorkerRow[]> {
    const workers = await store.workerList({ includeExited: false, limit: 1_000 });
    this.supervisorId ??= workers.find((w) => w.kind === 'supervisor' && w.pid === this.pid)?.id;
    if (this.supervisorId === undefined) return [];
    return workers.filter((w) => w.kind === 'child' && w.supervisor_id === this.supervisorId && isAlive(w.pid));
  }

  /** Wait until `count` live children say ready (or busy). */
  async waitReady(store: Store, count: number, timeoutMs = 30_000): Promise<WorkerRow[]> {
    return waitFor(
      `${count} ready children of supervisor ${this.pid}`,
      async () => {
        const dead = this.deadReason();
        if (dead !== undefined) throw new Error(dead);
        const ready = (await this.children(store)).filter((c) => c.state === 'ready' || c.state === 'busy');
        return ready.length >= count ? ready : undefined;
      },
      { intervalMs: 20, timeoutMs },
    );
  }

  /** The JSON lines of its log file, optionally only one event. */
  log(event?: string): LogLine[] {
    const file = join(this.dir, 'supervisor.log');
    if (!existsSync(file)) return [];
    const lines: LogLine[] = [];
    for (const text of readFileSync(file, 'utf8').split('\n')) {
      if (text.trim() === '') continue;
      try {
        const line = JSON.parse(text) as LogLine;
        if (event === undefined || line.event === event) lines.push(line);
      } catch {
        // a line being written
      }
    }
    return lines;
  }

  async stop(graceMs = 15_000): Promise<void> {
    this.process.noteDescendants();
    await this.process.stop(graceMs);
  }
}

/** A measurement's supervisor, and what it runs on. */
export interface SupervisedRun {
  config: string;
  database: BenchDatabase;
  queue: Queue;
  supervisor: SupervisorRun;
}

export interface SupervisedSetup extends Omit<ClassOptions, 'database' | 'handler'> {
  driver?: Driver;
  /** PostgreSQL: false adds `listen=off` (children poll). */
  listen?: boolean;
  /** Writes the handler into the folder; returns its file. */
  handler: (dir: string) => string;
  /** Runs on the open queue before the supervisor starts (a fill). */
  before?: (queue: Queue) => Promise<unknown>;
}

/** One supervisor in a folder (and database) of its own with the queue open beside it; all stopped, closed and dropped after `measure`. */
export async function withSupervisor<T>(
  ctx: BenchContext,
  label: string,
  setup: SupervisedSetup,
  measure: (run: SupervisedRun) => Promise<T>,
): Promise<T> {
  const dir = ctx.dirs.make(label);
  const database = benchDatabase(ctx, dir, setup.driver ?? 'sqlite', { listen: setup.listen });
  try {
    const config = writeConfig(dir, { ...setup, database: database.url, handler: setup.handler(dir) });
    const queue = await openBenchQueue(database.url);
    try {
      await setup.before?.(queue);
      const supervisor = SupervisorRun.start(ctx.processes, config, dir);
      try {
        return await measure({ config, database, queue, supervisor });
      } finally {
        await supervisor.stop();
      }
    } finally {
      await queue.close();
    }
  } finally {
    await database.dispose();
  }
}
