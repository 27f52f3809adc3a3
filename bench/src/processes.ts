/**
 * Every process the benchmark starts goes through here, so that every one of
 * them is stopped at the end, even on error: SIGTERM, then SIGKILL after a
 * deadline, descendants (a supervisor's children) included.
 */
import { execa, type ResultPromise } from 'execa';
import { fileURLToPath } from 'node:url';
import { descendantsOf, isAlive, sleep } from './common.js';

export const SUPERVISE = fileURLToPath(new URL('../../dist/supervisor/main.js', import.meta.url));
export const LEASEHOLD_CLI = fileURLToPath(new URL('../../dist/cli/leasehold.js', import.meta.url));

export interface ExitInfo {
  exitCode?: number;
  signal?: string;
}

/** A process we started: its pid, its exit, and a stop that cannot leave it (or its descendants) behind. */
export class Managed {
  readonly pid: number;
  readonly exited: Promise<ExitInfo>;
  private done = false;
  /** How it ended, once it has. */
  exit: ExitInfo | undefined;
  /** Descendants seen while it ran: stopped with it. */
  private readonly seen = new Set<number>();

  constructor(
    readonly name: string,
    private readonly child: ResultPromise,
    private readonly registry: ProcessRegistry,
  ) {
    if (child.pid === undefined) throw new Error(`could not start ${name}`);
    this.pid = child.pid;
    this.exited = child.then((result) => {
      this.done = true;
      this.exit = { exitCode: result.exitCode, signal: result.signal };
      return this.exit;
    });
  }

  get running(): boolean {
    return !this.done;
  }

  /** Remember its current descendants, so a stop still reaches them if it dies first. */
  noteDescendants(): number[] {
    const now = this.done ? [] : descendantsOf(this.pid);
    for (const pid of now) this.seen.add(pid);
    return now;
  }

  signal(signal: NodeJS.Signals): void {
    if (!this.done) this.child.kill(signal);
  }

  /** SIGTERM (or `signal`), then SIGKILL after `graceMs`; then SIGKILL any descendant still alive after a short wait. */
  async stop(graceMs = 10_000, signal: NodeJS.Signals = 'SIGTERM'): Promise<ExitInfo> {
    this.noteDescendants();
    this.signal(signal);
    // Unref'd deadlines: a timer left pending after the race must not keep the bench alive once it is done.
    const inTime = await Promise.race([
      this.exited.then(() => true),
      sleep(graceMs, undefined, { ref: false }).then(() => false),
    ]);
    if (!inTime) {
      this.signal('SIGKILL');
      await Promise.race([this.exited, sleep(5_000, undefined, { ref: false })]);
    }
    // Its children were told to go by it; give them a moment, then take them down ourselves.
    const deadline = Date.now() + (inTime ? 3_000 : 0);
    while ([...this.seen].some(isAlive) && Date.now() < deadline) await sleep(50);
    for (const pid of this.seen) {
      if (isAlive(pid)) killQuietly(pid);
    }
    this.registry.forget(this);
    return this.exited;
  }

  /** For the exit hook: SIGKILL it and everything it started, synchronously. */
  killNow(): void {
    for (const pid of [...descendantsOf(this.pid), ...this.seen]) killQuietly(pid);
    this.signal('SIGKILL');
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

export interface StartOptions {
  /** stdout and stderr are appended to this file. */
  output?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** The processes of one benchmark run. `stopAll` in a finally; an exit hook SIGKILLs whatever is left. */
export class ProcessRegistry {
  private readonly live = new Set<Managed>();

  constructor() {
    process.once('exit', () => {
      for (const managed of this.live) managed.killNow();
    });
  }

  /** Start `node <script> ...args`. */
  startNode(name: string, script: string, args: string[], options: StartOptions = {}): Managed {
    return this.start(name, process.execPath, [script, ...args], options);
  }

  /** Start `command ...args` (a program other than node: a peer's server). */
  start(name: string, command: string, args: string[], options: StartOptions = {}): Managed {
    const child = execa(command, args, {
      reject: false,
      stdin: 'ignore',
      stdout: options.output === undefined ? 'ignore' : { file: options.output, append: true },
      stderr: options.output === undefined ? 'ignore' : { file: options.output, append: true },
      env: options.env,
      cwd: options.cwd,
      // We stop them ourselves, in order; the exit hook is the backstop.
      cleanup: false,
    });
    const managed = new Managed(name, child, this);
    this.live.add(managed);
    return managed;
  }

  forget(managed: Managed): void {
    this.live.delete(managed);
  }

  get count(): number {
    return this.live.size;
  }

  async stopAll(graceMs = 10_000): Promise<void> {
    await Promise.all([...this.live].map((managed) => managed.stop(graceMs)));
  }
}
