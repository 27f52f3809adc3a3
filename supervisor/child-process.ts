import { fork, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ClassConfig } from '../src/config/schema.js';
import type { DbOutage } from '../src/store/faults.js';
import { isChildToSupervisor, type ChildStart, type ChildToSupervisor, type SupervisorToChild } from '../src/ipc/protocol.js';
import { describeExit } from './exit-reason.js';
import { JobUsage, type UsageSample } from './job-usage.js';

const CHILD_MAIN = fileURLToPath(new URL('../child/main.js', import.meta.url));

/** Why a healthy child is taken out of service: the supervisor stops, or a reload replaces or removes it. */
export type RetireReason = 'shutdown' | 'reload';
export type KillReason = 'max_runtime' | 'unresponsive' | 'memory' | RetireReason;

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningJob {
  jobId: number;
  attempt: number;
  leaseToken: string;
  /** When the child said it started the job (its start reaches the database later, or with the outcome). */
  startedAt: number;
  /** When the health watch first saw the job no longer held by this child, while the child still says it runs it. */
  missingSince?: number;
  /** What the health watch's samples of the child showed while it ran the job. */
  usage: JobUsage;
}

export interface ChildEvents {
  message(child: ChildHandle, message: ChildToSupervisor): void;
  output(child: ChildHandle, stream: 'stdout' | 'stderr', line: string): void;
  exit(child: ChildHandle, exit: ChildExit): void;
}

/**
 * One forked child worker, leader of its own process group so that a kill
 * reaches the handler's subprocesses too. Tracks what the supervisor knows of
 * it: state, the jobs in hand, why we killed it (if we did).
 */
export class ChildHandle {
  readonly process: ChildProcess;
  readonly pid: number;
  state: 'starting' | 'ready' | 'busy' | 'stopping' | 'exited' = 'starting';
  /** The job it started last, as it told us. */
  job: RunningJob | undefined;
  /** Jobs it started whose outcome it has not written yet (outcomes are written in batches), in start order. */
  readonly started = new Map<number, RunningJob>();
  /** How many jobs it has finished: a child that did work and then crashed is restarted without delay growth. */
  jobsFinished = 0;
  /** Why we stopped it, the error code the culprit's attempt ends with, and the culprit when one job is to blame. */
  killed: { reason: KillReason; code: string; detail: string; culprit: RunningJob | undefined } | undefined;
  startupError: string | undefined;
  /** Set once it was asked to drain: it is leaving, not crashing, and its slot may not be refilled. */
  retiring: RetireReason | undefined;
  /** When we sent the oldest ping it has not answered (any message answers): how the health watch tells a blocked child. */
  private unansweredSince: number | undefined;
  /** The database outage it reports, while it lasts. */
  dbOutage: DbOutage | undefined;
  /** The health watch's last sample of it. */
  private lastUsage: UsageSample | undefined;
  readonly exited: Promise<ChildExit>;
  /** Resolves when it reports ready, or exits without ever being ready. */
  readonly ready: Promise<void>;
  private becameReady!: () => void;
  private killTimer: NodeJS.Timeout | undefined;

  readonly workerId: string;
  /** The class config it was started with (a reload replaces children, never their config), and the result cap. */
  readonly config: ClassConfig;
  readonly resultLimitBytes: number;

  constructor(start: ChildStart, events: ChildEvents) {
    this.workerId = start.workerId;
    this.ready = new Promise((resolve) => (this.becameReady = resolve));
    this.config = start.config;
    this.resultLimitBytes = start.resultLimitBytes;
    this.process = fork(CHILD_MAIN, [], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
    });
    if (this.process.pid === undefined) throw new Error(`could not fork a child for class ${start.config.name}`);
    this.pid = this.process.pid;
    this.send(start);
    this.process.on('message', (message: unknown) => {
      this.unansweredSince = undefined;
      if (isChildToSupervisor(message)) events.message(this, message);
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      const source = this.process[stream];
      if (source !== null) createInterface({ input: source }).on('line', (line) => events.output(this, stream, line));
    }
    // 'exit', not 'close': a grandchild holding the pipes open must not delay what we do about the child.
    this.exited = new Promise((resolve) => {
      this.process.once('exit', (code, signal) => {
        this.state = 'exited';
        this.becameReady();
        clearTimeout(this.killTimer);
        // Whatever the handler left running in the group goes with the child.
        this.signalGroup('SIGKILL');
        const exit = { code, signal };
        events.exit(this, exit);
        resolve(exit);
      });
    });
    // An IPC error (the child died mid-send) shows up as its exit; nothing to add here.
    this.process.on('error', () => undefined);
  }

  get alive(): boolean {
    return this.state !== 'exited';
  }

  /** Ask whether it is there; the clock of an unanswered ping keeps running from the first one. */
  ping(): void {
    this.unansweredSince ??= Date.now();
    this.send({ type: 'ping' });
  }

  /** Our own loop was stalled: the unanswered ping's wait starts again now. */
  forgiveSilence(): void {
    if (this.unansweredSince !== undefined) this.unansweredSince = Date.now();
  }

  /** How long a ping of ours has waited for an answer (0: none waits). */
  unansweredForMs(): number {
    return this.unansweredSince === undefined ? 0 : Date.now() - this.unansweredSince;
  }

  send(message: SupervisorToChild): void {
    if (this.process.connected) this.process.send(message, () => undefined);
  }

  /** It says it started a job: the job it runs now (with one slot, the one to blame for what the child does). */
  jobStarted(job: Pick<RunningJob, 'jobId' | 'attempt' | 'leaseToken'>): void {
    this.job = { jobId: job.jobId, attempt: job.attempt, leaseToken: job.leaseToken, startedAt: Date.now(), usage: new JobUsage(this.lastUsage) };
    this.started.set(job.jobId, this.job);
    if (this.state === 'ready') this.state = 'busy';
  }

  /** A health-watch sample: the latest, and part of what each job it runs now used. */
  recordUsage(sample: UsageSample): void {
    this.lastUsage = sample;
    for (const job of this.started.values()) job.usage.observe(sample);
  }

  markReady(): void {
    if (this.state === 'starting') this.state = 'ready';
    this.becameReady();
  }

  /** Why it did not become ready (it exited first, or was not ready within `timeoutMs`: then it is killed), or undefined once it is. */
  async untilReady(timeoutMs: number): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)));
    const late = await Promise.race([this.ready.then(() => false), timedOut]);
    clearTimeout(timer);
    if (!late && this.alive) return undefined;
    if (late) this.forceKill('reload', 'LEASE:RELEASED', `not ready within ${timeoutMs / 1000}s`);
    const exit = await this.exited;
    if (late) return `it was not ready within ${timeoutMs / 1000}s`;
    return this.startupError ?? `it ended before it was ready (${describeExit(exit.code, exit.signal)})`;
  }

  /** Ask it to drain and exit: no more claims, running jobs finish, waiting ones go back free. */
  retire(reason: RetireReason): void {
    this.retiring ??= reason;
    this.send({ type: 'drain' });
  }

  /**
   * Stop the child for a reason: SIGTERM to its group, SIGKILL after
   * `graceMs`. The first reason given is the one recorded.
   */
  kill(reason: KillReason, code: string, detail: string, graceMs: number, culprit = this.soleSuspect()): void {
    if (!this.alive) return;
    this.killed ??= { reason, code, detail, culprit };
    if (this.killTimer !== undefined) return;
    this.state = 'stopping';
    this.signalGroup('SIGTERM');
    this.killTimer = setTimeout(() => this.signalGroup('SIGKILL'), graceMs);
  }

  /** SIGKILL now, the group included. */
  forceKill(reason: KillReason, code: string, detail: string): void {
    this.killed ??= { reason, code, detail, culprit: this.soleSuspect() };
    this.signalGroup('SIGKILL');
  }

  /**
   * The job to blame for what the whole child did (crashed, blocked, grew):
   * with one slot, the job it started last (the ones before it have ended);
   * with several, nobody can tell, so none.
   */
  soleSuspect(): RunningJob | undefined {
    return this.config.concurrency === 1 ? this.job : undefined;
  }

  private signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      // ESRCH: the group is already gone
    }
  }
}
