/**
 * Runs a real supervisor (`node dist/supervisor/main.js --config F`) on a
 * fresh queue.yaml in a temp folder, with short timings, and gives the test a
 * handle on it: the queue (same database), the log file's JSON lines, the
 * children in the workers table, signals, and waits with deadlines.
 * Every process it starts is registered with the process guard.
 */
import { execa, type ResultPromise } from 'execa';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { openQueue, type JobDetails, type Queue } from '../../src/queue/queue.js';
import { migrate } from '../../src/store/open.js';
import type { JobStatus, WorkerRow } from '../../src/store/types.js';
import { onCleanup, trackLogFile, trackProcess, trackWorkersDatabase } from './processes.js';
import { jsonLogReader } from './json-log.js';
import { waitFor } from './wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SUPERVISE_BIN = path.join(ROOT, 'dist/supervisor/main.js');
const FIXTURES = path.join(ROOT, 'test/fixtures/handlers');

/** Absolute path of a fixture handler, by its name without `.mjs`. */
export function fixture(name: string): string {
  return path.join(FIXTURES, `${name}.mjs`);
}

export interface ClassSpec {
  name: string;
  /** A fixture name (`succeed`) or an absolute path. */
  handler: string;
  processes?: number;
  /** Jobs one child runs at the same time (`classes[].concurrency`, default 1). */
  concurrency?: number;
  lease_seconds?: number;
  heartbeat_seconds?: number;
  max_runtime_seconds?: number;
  kill_grace_seconds?: number;
  max_retries?: number;
  backoff?: { base_seconds?: number; max_seconds?: number; jitter?: boolean };
  max_memory_mb?: number;
  restart?: { max_restarts?: number; within_seconds?: number };
  claim_batch?: number;
  poll_seconds?: number;
  /** `classes[].schedules`, as written to queue.yaml. */
  schedules?: Record<string, unknown>[];
  rate_limit?: { max: number; per_seconds: number };
  /** `classes[].middleware`: module paths, run inside the top-level ones. */
  middleware?: string[];
  /** Wait for this class's children to be ready at start (default true). */
  waitReady?: boolean;
  /** Write only the fields given: the schema's defaults for the rest, not this helper's short test timings. */
  bare?: boolean;
}

export interface StartOptions {
  /** The folder for the config, database and log; reuse one to start a second supervisor on the same database. */
  dir: string;
  /** The queue's database: default `queue.db` in `dir`; a postgres:// URL for PostgreSQL. */
  database?: string;
  /** Another way to the same database for the test's own queue (not through a proxy the test breaks); default `database`. */
  queueDatabase?: string;
  /** The config's `host:` (the supervisor's host identity). */
  host?: string;
  /** Environment variables for the supervisor on top of the test's own (LEASEHOLD_HOST, say). */
  env?: Record<string, string>;
  classes: ClassSpec[];
  shutdownGraceSeconds?: number;
  /** The config's top-level `middleware:` (module paths). */
  middleware?: string[];
  /** 'default': leave `sweeper.interval_seconds` out of the config (the schema's default). */
  sweeperIntervalSeconds?: number | 'default';
  logLevel?: 'error' | 'warn' | 'info' | 'debug';
  /** Deadline for the children to be ready (default 45 s). */
  readyTimeoutMs?: number;
  /** The config's `http:` (port 0: any free port, logged as HTTP_LISTENING; `dashboard`: the web dashboard on it too); none by default. */
  http?: { port: number; host?: string; dashboard?: boolean };
  /** The config's top-level `statement_timeout_seconds`; the schema's default when absent. */
  statementTimeoutSeconds?: number;
  /** `supervise --watch`. */
  watch?: boolean;
}

export interface LogRecord {
  ts: string;
  level: string;
  msg: string;
  supervisor_id?: string;
  class?: string;
  pid?: number;
  job_id?: number;
  attempt?: number;
  event?: string;
  [key: string]: unknown;
}

export interface SupervisorHandle {
  pid: number;
  dir: string;
  configFile: string;
  logFile: string;
  database: string;
  queue: Queue;
  /** The JSON lines of the log file so far. */
  logEvents(): LogRecord[];
  /** Log lines with this `event`, optionally narrowed by fields. */
  events(event: string, match?: Partial<LogRecord>): LogRecord[];
  waitForEvent(event: string, match?: Partial<LogRecord>, timeoutMs?: number): Promise<LogRecord>;
  /** This supervisor's id (its row in workers). */
  supervisorId(): Promise<string>;
  /** This supervisor's children not known to have exited, optionally of one class. */
  children(cls?: string): Promise<WorkerRow[]>;
  /** Every child this supervisor ever had, exited ones too. */
  allChildren(cls?: string): Promise<WorkerRow[]>;
  /** Wait until `count` children of the class are ready (state ready or busy) and return them. */
  waitForChildren(cls: string, count: number, timeoutMs?: number): Promise<WorkerRow[]>;
  kill(signal: NodeJS.Signals): void;
  /** Resolves with the exit once the process has ended (null if not by the deadline). */
  waitForExit(timeoutMs: number): Promise<{ exitCode: number | undefined; signal: string | undefined } | null>;
  /** SIGTERM (or the signal given), then wait for the exit; returns the exit code (throws if it does not exit in time). */
  stop(timeoutMs?: number, signal?: NodeJS.Signals): Promise<number | undefined>;
  exited(): boolean;
  waitForJob(id: number, want: JobStatus | ((details: JobDetails) => boolean), timeoutMs?: number): Promise<JobDetails>;
  /** What the supervisor printed so far, for failure messages. */
  output(): string;
}

const counters = new Map<string, number>();

function classYaml(spec: ClassSpec): Record<string, unknown> {
  const { waitReady: _waitReady, bare, handler, ...rest } = spec;
  const handlerPath = path.isAbsolute(handler) ? handler : fixture(handler);
  if (bare === true) return { ...rest, name: spec.name, handler: handlerPath };
  return {
    processes: 1,
    lease_seconds: 2,
    heartbeat_seconds: 0.5,
    max_runtime_seconds: 20,
    kill_grace_seconds: 0.5,
    max_retries: 0,
    max_memory_mb: 1024,
    poll_seconds: 0.1,
    ...rest,
    name: spec.name,
    handler: handlerPath,
    backoff: { base_seconds: 0.1, max_seconds: 0.2, jitter: false, ...spec.backoff },
    restart: { max_restarts: 10, within_seconds: 60, ...spec.restart },
  };
}

export async function startSupervisor(options: StartOptions): Promise<SupervisorHandle> {
  const { dir } = options;
  const n = (counters.get(dir) ?? 0) + 1;
  counters.set(dir, n);
  const configFile = path.join(dir, `queue-${n}.yaml`);
  const logFile = path.join(dir, `supervisor-${n}.log`);
  const database = options.database ?? path.join(dir, 'queue.db');
  const config = {
    database,
    ...(options.host === undefined ? {} : { host: options.host }),
    log: { level: options.logLevel ?? 'debug', file: logFile },
    sweeper:
      options.sweeperIntervalSeconds === 'default'
        ? { batch_size: 100 }
        : { interval_seconds: options.sweeperIntervalSeconds ?? 0.5, batch_size: 100 },
    shutdown_grace_seconds: options.shutdownGraceSeconds ?? 3,
    ...(options.middleware === undefined ? {} : { middleware: options.middleware }),
    ...(options.http === undefined ? {} : { http: options.http }),
    ...(options.statementTimeoutSeconds === undefined
      ? {}
      : { statement_timeout_seconds: options.statementTimeoutSeconds }),
    classes: options.classes.map(classYaml),
  };
  writeFileSync(configFile, stringify(config));

  // Migrated first, as an application's setup does, so the test can enqueue before the supervisor is up.
  await migrate({ database: options.queueDatabase ?? database });
  const queue = await openQueue({ database: options.queueDatabase ?? database, actor: 'test' });
  onCleanup(() => queue.close());
  trackWorkersDatabase(database);
  trackLogFile(logFile);

  const subprocess: ResultPromise<{ reject: false; buffer: false; stdin: 'ignore' }> = execa(
    'node',
    [SUPERVISE_BIN, '--config', configFile, ...(options.watch === true ? ['--watch'] : [])],
    {
      reject: false,
      buffer: false,
      stdin: 'ignore',
      // stop() waits as long as the test says; execa would SIGKILL 5 s after a SIGTERM, inside a longer grace.
      forceKillAfterDelay: false,
      cwd: dir,
      ...(options.env === undefined ? {} : { env: options.env }),
    },
  );
  const pid = subprocess.pid;
  if (pid === undefined) throw new Error(`could not spawn the supervisor: ${SUPERVISE_BIN}`);
  trackProcess(pid, `supervisor ${configFile}`);

  const printed: string[] = [];
  subprocess.stdout?.on('data', (chunk: Buffer) => printed.push(chunk.toString()));
  subprocess.stderr?.on('data', (chunk: Buffer) => printed.push(chunk.toString()));
  let exit: { exitCode: number | undefined; signal: string | undefined } | undefined;
  const ended = subprocess.then((result) => {
    exit = { exitCode: result.exitCode, signal: result.signal };
    return exit;
  });

  const output = () => printed.join('');
  const log = jsonLogReader<LogRecord>(logFile);
  onCleanup(log.close);
  const logEvents = log.read;
  const matches = (record: LogRecord, match: Partial<LogRecord>) =>
    Object.entries(match).every(([key, value]) => record[key] === value);
  const events = (event: string, match: Partial<LogRecord> = {}) =>
    logEvents().filter((r) => r.event === event && matches(r, match));

  let ownId: string | undefined;
  const supervisorId = async (): Promise<string> => {
    ownId ??= (
      await waitFor(`the supervisor (pid ${pid}) in the workers table`, async () => {
        const rows = await queue.store.workerList({ includeExited: true, limit: 1000 });
        return rows.find((row) => row.kind === 'supervisor' && row.pid === pid);
      })
    ).id;
    return ownId;
  };
  const allChildren = async (cls?: string): Promise<WorkerRow[]> => {
    const id = await supervisorId();
    const rows = await queue.store.workerList({ includeExited: true, limit: 1000 });
    return rows.filter(
      (row) => row.kind === 'child' && row.supervisor_id === id && (cls === undefined || row.class === cls),
    );
  };
  const children = async (cls?: string): Promise<WorkerRow[]> =>
    (await allChildren(cls)).filter((row) => row.exited_at === null);

  const describe = () =>
    `\n--- supervisor output ---\n${output().slice(-4000)}\n--- exit: ${JSON.stringify(exit ?? null)}`;
  const deadlineError = (error: unknown) => new Error(`${(error as Error).message}${describe()}`);

  const handle: SupervisorHandle = {
    pid,
    dir,
    configFile,
    logFile,
    database,
    queue,
    logEvents,
    events,
    async waitForEvent(event, match = {}, timeoutMs = 15_000) {
      return waitFor(`log event ${event} ${JSON.stringify(match)}`, () => events(event, match)[0], { timeoutMs }).catch(
        (error: unknown) => {
          throw deadlineError(error);
        },
      );
    },
    supervisorId,
    children,
    allChildren,
    async waitForChildren(cls, count, timeoutMs = 15_000) {
      return waitFor(
        `${count} ready children of class ${cls}`,
        async () => {
          if (exit !== undefined) throw new Error(`the supervisor exited while waiting for ${cls} children`);
          const ready = (await children(cls)).filter((row) => row.state === 'ready' || row.state === 'busy');
          return ready.length >= count ? ready : undefined;
        },
        { timeoutMs },
      ).catch((error: unknown) => {
        throw deadlineError(error);
      });
    },
    kill(signal) {
      subprocess.kill(signal);
    },
    async waitForExit(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), timeoutMs);
      });
      try {
        return await Promise.race([ended, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    async stop(timeoutMs = ((options.shutdownGraceSeconds ?? 3) + 10) * 1000, signal: NodeJS.Signals = 'SIGTERM') {
      if (exit === undefined) subprocess.kill(signal);
      const result = await handle.waitForExit(timeoutMs);
      if (result === null)
        throw new Error(`the supervisor did not exit within ${timeoutMs} ms of ${signal}${describe()}`);
      return result.exitCode;
    },
    exited: () => exit !== undefined,
    async waitForJob(id, want, timeoutMs = 20_000) {
      const ok = typeof want === 'function' ? want : (details: JobDetails) => details.job.status === want;
      let last: JobDetails | undefined;
      return waitFor(
        `job ${id} to reach ${typeof want === 'function' ? 'the awaited state' : want}`,
        async () => {
          last = await queue.get(id);
          return last !== undefined && ok(last) ? last : undefined;
        },
        { timeoutMs, intervalMs: 25 },
      ).catch((error: unknown) => {
        const seen =
          last === undefined
            ? 'nothing'
            : JSON.stringify({ status: last.job.status, attempts: last.attempts, error_code: last.job.error_code });
        throw new Error(`${(error as Error).message}; last seen: ${seen}${describe()}`);
      });
    },
    output,
  };

  // Make sure a test that fails halfway still ends with its supervisor gone; the guard then reports leftovers.
  onCleanup(async () => {
    if (exit === undefined) {
      subprocess.kill('SIGKILL');
      await handle.waitForExit(5_000);
    }
  });

  // A deadline, not a wait: under nice beside a chaos run's first burst, three children took over 15 s to be ready.
  const readyTimeoutMs = options.readyTimeoutMs ?? 45_000;
  for (const spec of options.classes) {
    if (spec.waitReady === false) continue;
    await handle.waitForChildren(spec.name, spec.processes ?? 1, readyTimeoutMs);
  }
  return handle;
}

/** The children whose pids were gone from the class since `before`: the replacements. */
export function newPids(before: WorkerRow[], after: WorkerRow[]): number[] {
  const old = new Set(before.map((row) => row.pid));
  return after.map((row) => row.pid).filter((pid) => !old.has(pid));
}

/**
 * The child `deadPid` of `cls` is recorded as exited, and a new child of the
 * class (another pid) is up and ready, with the restart counted.
 */
export async function waitForReplacement(
  sup: SupervisorHandle,
  cls: string,
  deadPid: number,
  timeoutMs = 15_000,
): Promise<{ dead: WorkerRow; replacement: WorkerRow }> {
  return waitFor(
    `a replacement for child ${deadPid} of class ${cls}`,
    async () => {
      const all = await sup.allChildren(cls);
      const dead = all.find((row) => row.pid === deadPid && row.exited_at !== null);
      const replacement = all.find(
        (row) =>
          row.pid !== deadPid &&
          row.exited_at === null &&
          (row.state === 'ready' || row.state === 'busy') &&
          row.restarts >= 1,
      );
      return dead !== undefined && replacement !== undefined ? { dead, replacement } : undefined;
    },
    { timeoutMs },
  ).catch(async (error: unknown) => {
    const rows = await sup.allChildren(cls).catch(() => []);
    throw new Error(
      `${(error as Error).message}; workers rows: ${JSON.stringify(rows)}\n--- supervisor output ---\n${sup.output().slice(-3000)}`,
    );
  });
}

/** A supervisor with the one class, that class's first child, and one job of it enqueued for that child to take. */
export async function startWithJob(
  dir: string,
  cls: ClassSpec,
  job: { payload: unknown; maxRetries?: number },
): Promise<{ sup: SupervisorHandle; first: WorkerRow | undefined; id: number }> {
  const sup = await startSupervisor({ dir, classes: [cls] });
  const [first] = await sup.children(cls.name);
  const { id } = await sup.queue.enqueue({ class: cls.name, ...job });
  return { sup, first, id };
}
