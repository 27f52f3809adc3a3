import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SupervisorStore, WorkerRow } from '../../src/store/types.js';
import { isPidAlive } from '../../src/pids.js';
import { ProcessLedger } from './process-ledger.js';
import { SupervisorRun, type SupervisorExit } from './supervisor-run.js';

/** A supervisor that exited without being asked: never part of the damage, always a violation. */
export interface UnexpectedExit extends SupervisorExit {
  pid: number;
  /** The end of what the supervisors printed, for the report. */
  lastOutput: string;
}

const READY_TIMEOUT_MS = 30_000;
/** The last supervisor's drain: shutdown_grace_seconds and kill_grace_seconds are far shorter. */
const SHUTDOWN_WAIT_MS = 30_000;
/** Supervisors in a row that may exit before a child is ready (each one a violation) before the run gives up. */
const START_TRIES = 5;
/** How long a SIGKILLed supervisor's children get to notice and exit before the next supervisor starts. */
const FAMILY_EXIT_MS = 10_000;

/**
 * The supervisor of the run, one at a time: started, SIGKILLed and
 * replaced by the damage, stopped at the end. Every supervisor and
 * everything seen descending from one goes into the ledger of processes
 * that must all be gone at the end.
 */
export class Supervisors {
  private run: SupervisorRun | undefined;
  readonly unexpectedExits: UnexpectedExit[] = [];
  kills = 0;
  /** Worker rows registered from here on are this run's (a reused PostgreSQL schema keeps an earlier run's). */
  private readonly since = Date.now();

  constructor(
    private readonly options: { configFile: string; output: string; store: SupervisorStore; ledger: ProcessLedger },
  ) {}

  get current(): SupervisorRun {
    if (this.run === undefined) throw new Error('no supervisor started');
    return this.run;
  }

  /**
   * Start a supervisor and wait until one of its children is ready. One
   * that exits on its own meanwhile is recorded, and another is tried.
   */
  async start(): Promise<void> {
    for (let tries = 1; ; tries++) {
      const run = new SupervisorRun(this.options.configFile, this.options.output);
      this.run = run;
      this.options.ledger.notePid(run.pid, 'supervisor');
      const deadline = Date.now() + READY_TIMEOUT_MS;
      while (run.running && (await this.children()).filter((c) => c.state !== 'starting').length === 0) {
        if (Date.now() > deadline)
          throw new Error(
            `supervisor ${run.pid} has no ready child after ${READY_TIMEOUT_MS / 1000} s; see ${this.options.output}`,
          );
        await sleep(50);
      }
      if (run.running) return;
      await run.exited;
      this.recordUnexpectedExit(run);
      if (tries >= START_TRIES)
        throw new Error(`${tries} supervisors in a row exited before a child was ready; see ${this.options.output}`);
    }
  }

  /** The live supervisor's children that are alive, from the worker rows: whom to aim at (the orphan check does not trust these rows). */
  async children(): Promise<WorkerRow[]> {
    const run = this.current;
    const workers = await this.options.store.workerList({ includeExited: false, limit: 1_000 });
    const supervisorId = workers.find(
      (w) => w.kind === 'supervisor' && w.pid === run.pid && w.started_at >= this.since,
    )?.id;
    if (supervisorId === undefined) return [];
    return workers.filter((w) => w.kind === 'child' && w.supervisor_id === supervisorId && isPidAlive(w.pid));
  }

  /** Note what descends from the live supervisor now: children that never ran a job are known to the orphan check this way. */
  noteFamily(ledger = this.options.ledger): void {
    const run = this.run;
    if (run?.running) ledger.noteDescendants(run.pid, `descendant of supervisor ${run.pid}`);
  }

  /** SIGKILL the supervisor, let its children notice and go, start another. */
  async killAndReplace(stopped: Iterable<number>): Promise<void> {
    const run = this.current;
    const family = new ProcessLedger();
    this.noteFamily(family);
    this.noteFamily();
    run.kill('SIGKILL');
    await run.exited;
    this.kills += 1;
    // Stopped children cannot notice their parent died until they run again.
    for (const pid of stopped) signal(pid, 'SIGCONT');
    // Whether they all went is the end's question (the orphan check); here it only keeps the next start clean.
    await family.waitUntilGone(FAMILY_EXIT_MS);
    // A child's watchdog SIGKILLs it when it lingers without its supervisor: it may have died mid-write.
    this.options.ledger.noteDeathsOf(family, `outlived its supervisor ${run.pid}, which was SIGKILLed`);
    await this.start();
  }

  /** A supervisor that exited on its own is recorded (a violation), and another started so that the run can finish and be checked. */
  async replaceIfExited(): Promise<void> {
    const run = this.current;
    if (run.running || run.unexpectedExit === undefined) return;
    this.recordUnexpectedExit(run);
    await this.start();
  }

  private recordUnexpectedExit(run: SupervisorRun): void {
    if (run.unexpectedExit === undefined) return;
    this.unexpectedExits.push({ pid: run.pid, ...run.unexpectedExit, lastOutput: lastWords(this.options.output) });
    run.unexpectedExit = undefined;
  }

  /** SIGTERM the live supervisor (drain and exit) and wait for it; SIGKILL it if it has not gone after SHUTDOWN_WAIT_MS. */
  async stop(): Promise<SupervisorExit & { shutdown_ms: number }> {
    const run = this.current;
    this.noteFamily();
    const asked = Date.now();
    run.kill('SIGTERM');
    const timer = setTimeout(() => run.kill('SIGKILL'), SHUTDOWN_WAIT_MS);
    const exit = await run.exited;
    clearTimeout(timer);
    run.unexpectedExit = undefined;
    return { ...exit, shutdown_ms: Date.now() - asked };
  }

  /** On the way out after an error or a signal: SIGKILL the live supervisor (its children follow on their own). */
  abandon(): void {
    if (this.run?.running) this.run.kill('SIGKILL');
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/** The error the output ended with (the last line naming one) and its last lines: what a crashed supervisor said. */
function lastWords(file: string): string {
  let lines: string[];
  try {
    lines = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-60);
  } catch {
    return '';
  }
  const error = [...lines].reverse().find((line) => /^\s*(\w*Error\b|Uncaught)/.test(line));
  return [error, ...lines.slice(-3)].filter((line) => line !== undefined).join('\n');
}
