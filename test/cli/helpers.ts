/**
 * For the command-line suites: run the real `leasehold` binary as a user
 * would, write a queue.yaml with short timings, run a real supervisor
 * (`supervise --config F`) and end it (and its children) however the test
 * goes, copy a database, and fingerprint its tables to show that a command
 * wrote nothing.
 */
import Database from 'better-sqlite3';
import { execa, type ResultPromise } from 'execa';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { jsonLogReader } from '../helpers/json-log.js';
import { waitFor } from '../helpers/wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const LEASEHOLD_BIN = path.join(ROOT, 'dist/cli/leasehold.js');
export const SUPERVISE_BIN = path.join(ROOT, 'dist/supervisor/main.js');

export function fixture(name: string): string {
  return path.join(ROOT, 'test/fixtures/cli', `${name}.mjs`);
}

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** `node dist/cli/leasehold.js ...args`, never rejecting: the test looks at the exit code. */
export async function leasehold(args: string[], options: { input?: string; cwd?: string } = {}): Promise<CliResult> {
  const result = await execa('node', [LEASEHOLD_BIN, ...args], {
    reject: false,
    input: options.input ?? '',
    cwd: options.cwd,
    timeout: 30_000,
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** The same with --json; fails the test (with stderr) unless it exits 0. */
export async function leaseholdJson<T = Record<string, unknown>>(
  args: string[],
  options: { input?: string } = {},
): Promise<T> {
  const result = await leasehold([...args, '--json'], options);
  if (result.exitCode !== 0) throw new Error(`leasehold ${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

export interface ClassSpec {
  name: string;
  handler: string;
  [key: string]: unknown;
}

export interface ConfigSpec {
  database: string;
  logFile: string;
  classes: ClassSpec[];
  [key: string]: unknown;
}

/** A queue.yaml with test timings (lease 2 s, heartbeat 0.5 s, sweeper 0.5 s); returns its path. */
export function writeConfig(file: string, spec: ConfigSpec): string {
  const { database, logFile, classes, ...rest } = spec;
  const config = {
    database,
    log: { level: 'debug', file: logFile },
    sweeper: { interval_seconds: 0.5, batch_size: 100 },
    shutdown_grace_seconds: 2,
    ...rest,
    classes: classes.map((cls) => ({
      processes: 1,
      lease_seconds: 2,
      heartbeat_seconds: 0.5,
      max_runtime_seconds: 60,
      kill_grace_seconds: 0.5,
      max_retries: 0,
      poll_seconds: 0.1,
      ...cls,
      backoff: { base_seconds: 0.1, max_seconds: 0.2, jitter: false },
    })),
  };
  writeFileSync(file, stringify(config));
  return file;
}

export interface LogRecord {
  event?: string;
  pid?: number;
  [key: string]: unknown;
}

/** Every supervisor started since the last killLeftovers(), running or not: their children are checked too. */
const started = new Set<SupervisorRun>();

/** A real supervisor process on a config. */
export class SupervisorRun {
  private exit: { code: number | undefined; signal: string | undefined } | undefined;
  private readonly ended: Promise<unknown>;
  private readonly printed: string[] = [];
  private readonly log: { read: () => LogRecord[]; close: () => void };

  private constructor(
    private readonly process: ResultPromise,
    readonly logFile: string,
  ) {
    started.add(this);
    this.log = jsonLogReader<LogRecord>(logFile);
    process.stdout?.on('data', (chunk: Buffer) => this.printed.push(chunk.toString()));
    process.stderr?.on('data', (chunk: Buffer) => this.printed.push(chunk.toString()));
    this.ended = process.then((result) => {
      this.exit = { code: result.exitCode, signal: result.signal };
    });
  }

  /** Start it and wait for SUPERVISOR_STARTED in its log. */
  static async start(configFile: string, logFile: string): Promise<SupervisorRun> {
    const child = execa('node', [SUPERVISE_BIN, '--config', configFile], {
      reject: false,
      buffer: false,
      stdin: 'ignore',
    });
    const run = new SupervisorRun(child, logFile);
    await run.waitForEvent('SUPERVISOR_STARTED');
    return run;
  }

  get pid(): number {
    return this.process.pid as number;
  }

  get exited(): boolean {
    return this.exit !== undefined;
  }

  closeLog(): void {
    this.log.close();
  }

  events(event: string): LogRecord[] {
    return this.log.read().filter((record) => record.event === event);
  }

  async waitForEvent(
    event: string,
    match: (record: LogRecord) => boolean = () => true,
    timeoutMs = 15_000,
  ): Promise<LogRecord> {
    return waitFor(
      `log event ${event}`,
      () => {
        if (this.exit !== undefined)
          throw new Error(`the supervisor exited (${JSON.stringify(this.exit)}) before ${event}:\n${this.output()}`);
        return this.events(event).find(match);
      },
      { timeoutMs },
    );
  }

  output(): string {
    return this.printed.join('').slice(-4000);
  }

  signal(signal: NodeJS.Signals): void {
    this.process.kill(signal);
  }

  /** Resolves with the exit code once it has exited; throws if it has not by the deadline. */
  async waitForExit(timeoutMs = 15_000): Promise<number | undefined> {
    await waitFor('the supervisor to exit', () => this.exit !== undefined, { timeoutMs, intervalMs: 20 });
    await this.ended;
    return this.exit?.code;
  }

  /** SIGTERM and wait for the exit: the graceful path. */
  async stop(timeoutMs = 15_000): Promise<number | undefined> {
    if (this.exit === undefined) this.signal('SIGTERM');
    return this.waitForExit(timeoutMs);
  }

  /** The pids of the children it logged as spawned. */
  childPids(): number[] {
    return this.events('CHILD_SPAWNED')
      .map((record) => record.pid)
      .filter((pid): pid is number => typeof pid === 'number');
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // A zombie (exited, not reaped) counts as gone.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '');
  } catch {
    return false;
  }
}

/**
 * Ends every supervisor started since the last call and every child they
 * spawned (children lead their own process groups). Returns what had to be
 * killed: a test that ended cleanly left nothing.
 */
export async function killLeftovers(): Promise<string[]> {
  const killed: string[] = [];
  const runs = [...started];
  started.clear();
  for (const run of runs) {
    run.closeLog();
    const children = run.childPids();
    if (!run.exited) {
      killed.push(`supervisor ${run.pid}`);
      run.signal('SIGKILL');
      await run.waitForExit(5_000).catch(() => undefined);
    }
    for (const pid of children) {
      if (!isAlive(pid)) continue;
      killed.push(`child ${pid}`);
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // no group
      }
    }
  }
  return killed;
}

/** Copy a database (and its WAL, if a writer left one) to a new path. */
export function copyDatabase(from: string, to: string): string {
  copyFileSync(from, to);
  for (const suffix of ['-wal', '-shm']) if (existsSync(from + suffix)) copyFileSync(from + suffix, to + suffix);
  return to;
}

const FINGERPRINT_TABLES: [string, string][] = [
  ['jobs', 'id'],
  ['job_attempts', 'job_id, attempt'],
  ['job_events', 'id'],
  ['workers', 'id'],
  ['schema_migrations', 'version'],
  ['class_controls', 'class'],
  ['class_starts', 'id'],
  ['job_dependencies', 'job_id, parent_id'],
];

/** A hash of every row of the contract's tables, and their row counts: equal before and after means nothing was written. */
export function fingerprint(database: string): { hash: string; rows: Record<string, number> } {
  const db = new Database(database, { readonly: true, fileMustExist: true });
  try {
    const hash = createHash('sha256');
    const rows: Record<string, number> = {};
    for (const [table, order] of FINGERPRINT_TABLES) {
      const all = db.prepare(`SELECT * FROM ${table} ORDER BY ${order}`).all();
      rows[table] = all.length;
      hash.update(`${table}:${JSON.stringify(all)}\n`);
    }
    return { hash: hash.digest('hex'), rows };
  } finally {
    db.close();
  }
}

/** Count rows with a test's own query (read-only). */
export function countRows(database: string, sql: string, ...bind: unknown[]): number {
  const db = new Database(database, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(sql)
      .pluck()
      .get(...bind) as number;
  } finally {
    db.close();
  }
}
