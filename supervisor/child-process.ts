import type { ErrorSummary } from '../src/errors.js';
import { fork, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ClassConfig } from '../src/config/schema.js';
import type { DbOutage } from '../src/store/faults.js';
import { FlightRecordFile, type FlightRecord, type LoopRecord } from '../src/ipc/flight-record.js';
import { isChildToSupervisor, type SupervisorToChild } from '../src/ipc/protocol.js';
import { childExecArgv } from './child-flags.js';
import { describeExit } from './exit-reason.js';
import { JobUsage, type UsageSample } from './job-usage.js';
import { StderrTail, type LastWords, type UncaughtError } from './last-words.js';
import type {
  ChildEvents,
  ChildExit,
  ChildKill,
  ChildSpec,
  ChildState,
  KillReason,
  PoolChild,
  RetireReason,
  RunningJob,
  WatchedChild,
} from './supervised-child.js';

const CHILD_MAIN = fileURLToPath(new URL('../child/main.js', import.meta.url));

/**
 * One forked child worker, leader of its own process group so that a kill
 * reaches the handler's subprocesses too. Tracks what the supervisor knows of
 * it: state, the jobs in hand, why we killed it (if we did).
 */
export class ChildHandle implements PoolChild, WatchedChild {
  readonly process: ChildProcess;
  readonly pid: number;
  /** Ready or busy is told by what it runs (`state`); 'ready' stands for both here. */
  private lifecycle: Exclude<ChildState, 'busy'> = 'starting';
  private lastStarted: RunningJob | undefined;
  /** The jobs whose handlers it runs, as its flight recorder said when last read (once more when it exits). */
  private readonly inHand = new Map<number, RunningJob>();
  private readonly flight: FlightRecordFile;
  private finishedCount = 0;
  private killedFor: ChildKill | undefined;
  private startupFailure: string | undefined;
  private startupRetryable = false;
  private retireReason: RetireReason | undefined;
  /** When we sent the oldest ping it has not answered (any message answers): how the health watch tells a blocked child. */
  private unansweredSince: number | undefined;
  private outage: DbOutage | undefined;
  /** The health watch's last sample of it, and when it was taken. */
  private lastUsage: UsageSample | undefined;
  private lastUsageAt = 0;
  private readonly stderrTail = new StderrTail();
  private uncaught: UncaughtError | undefined;
  readonly exited: Promise<ChildExit>;
  /** Resolves when it reports ready, or exits without ever being ready. */
  readonly ready: Promise<void>;
  private becameReady!: () => void;
  private killTimer: NodeJS.Timeout | undefined;

  readonly workerId: string;
  /** The class config it was started with (a reload replaces children, never their config), and the result cap. */
  readonly config: ClassConfig;
  readonly resultLimitBytes: number;

  constructor(
    start: ChildSpec,
    events: ChildEvents<ChildHandle>,
    /** SQLite: the socket of the writer that makes its writes (none: it writes on its own connection). */
    writerSocket: string | undefined,
  ) {
    this.workerId = start.workerId;
    this.ready = new Promise((resolve) => (this.becameReady = resolve));
    this.config = start.config;
    this.resultLimitBytes = start.resultLimitBytes;
    this.flight = new FlightRecordFile(start.workerId, start.config.concurrency);
    this.process = fork(CHILD_MAIN, [], {
      execArgv: childExecArgv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
    });
    if (this.process.pid === undefined) {
      this.flight.remove();
      throw new Error(`could not fork a child for class ${start.config.name}`);
    }
    this.pid = this.process.pid;
    this.send({ ...start, flightRecord: this.flight.path, writer: writerSocket ?? null });
    this.process.on('message', (message: unknown) => {
      this.unansweredSince = undefined;
      if (!isChildToSupervisor(message)) return;
      events.message(this, message);
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      const source = this.process[stream];
      if (source === null) continue;
      createInterface({ input: source }).on('line', (line) => {
        if (stream === 'stderr') this.stderrTail.add(line);
        events.output(this, stream, line);
      });
    }
    // 'exit', not 'close': a grandchild holding the pipes open must not delay what we do about the child.
    this.exited = new Promise((resolve) => {
      this.process.once('exit', (code, signal) => {
        // What it ran when it died stays as the file said then: the take-back blames from it.
        this.readFlight();
        this.flight.remove();
        this.lifecycle = 'exited';
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
    return this.lifecycle !== 'exited';
  }

  get state(): ChildState {
    if (this.lifecycle !== 'ready') return this.lifecycle;
    return this.running().size > 0 ? 'busy' : 'ready';
  }

  get job(): RunningJob | undefined {
    this.running();
    return this.lastStarted;
  }

  get started(): ReadonlyMap<number, RunningJob> {
    return this.running();
  }

  /** What it runs now: read from its flight recorder while it lives; what it ran when it died, after. */
  private running(): ReadonlyMap<number, RunningJob> {
    if (this.lifecycle !== 'exited') this.readFlight();
    return this.inHand;
  }

  /**
   * Brings inHand up to the records: a job keeps what the samples showed
   * while its record stays; a record of another job or attempt is a new start.
   */
  private readFlight(): void {
    const records = new Map<number, FlightRecord>(this.flight.read().map((record) => [record.jobId, record]));
    for (const [jobId, job] of this.inHand) {
      const record = records.get(jobId);
      if (record === undefined || record.attempt !== job.attempt || record.leaseToken !== job.leaseToken)
        this.inHand.delete(jobId);
    }
    let last: RunningJob | undefined;
    for (const record of records.values()) {
      let job = this.inHand.get(record.jobId);
      if (job === undefined) {
        job = {
          jobId: record.jobId,
          attempt: record.attempt,
          leaseToken: record.leaseToken,
          startedAt: record.startedAt,
          usage: new JobUsage(this.lastUsage),
        };
        this.inHand.set(record.jobId, job);
      }
      if (last === undefined || job.startedAt >= last.startedAt) last = job;
    }
    this.lastStarted = last;
  }

  get runLoop(): LoopRecord | undefined {
    return this.lifecycle === 'exited' ? undefined : this.flight.readLoop();
  }

  get jobsFinished(): number {
    return this.finishedCount;
  }

  get killed(): ChildKill | undefined {
    return this.killedFor;
  }

  get startupError(): string | undefined {
    return this.startupFailure;
  }

  get startupRestartable(): boolean {
    return this.startupRetryable;
  }

  get retiring(): RetireReason | undefined {
    return this.retireReason;
  }

  get dbOutage(): DbOutage | undefined {
    return this.outage;
  }

  get lastWords(): LastWords {
    const lastRss = this.lastUsage === undefined ? undefined : { bytes: this.lastUsage.rssBytes, at: this.lastUsageAt };
    return { uncaught: this.uncaught, lastRss, stderr: this.stderrTail.read() };
  }

  /** It says which error nobody caught: it exits next. */
  diedOf(uncaught: UncaughtError): void {
    this.uncaught ??= uncaught;
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

  /** It says `count` outcomes are written. */
  jobsFinishedBy(count: number): void {
    this.finishedCount += count;
  }

  /** It says it could not start (its handler or store would not load, its setup failed); its exit follows. */
  startupFailed(error: ErrorSummary): void {
    this.startupFailure = error.message;
    this.startupRetryable = error.retryable;
  }

  /** The database outage it reports, or its end (undefined). */
  reportOutage(outage: DbOutage | undefined): void {
    this.outage = outage;
  }

  /** A health-watch sample: the latest, and part of what each job it runs now used. */
  recordUsage(sample: UsageSample): void {
    // Read first: a job found running now counts its CPU from the sample before this one.
    const running = this.running();
    this.lastUsage = sample;
    this.lastUsageAt = Date.now();
    for (const job of running.values()) job.usage.observe(sample);
  }

  markReady(): void {
    if (this.lifecycle === 'starting') this.lifecycle = 'ready';
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
    return this.startupFailure ?? `it ended before it was ready (${describeExit(exit.code, exit.signal)})`;
  }

  /** Ask it to drain and exit within `graceMs`: no more claims, running jobs finish, waiting ones go back free. */
  retire(reason: RetireReason, graceMs: number): void {
    this.retireReason ??= reason;
    this.send({ type: 'drain', graceMs });
  }

  /**
   * Stop the child for a reason: SIGTERM to its group, SIGKILL after
   * `graceMs` (0: SIGKILL now). The first reason given is the one recorded.
   */
  kill(reason: KillReason, code: string, detail: string, graceMs: number, culprit = this.soleSuspect()): void {
    if (!this.alive) return;
    this.killedFor ??= { reason, code, detail, culprit };
    this.lifecycle = 'stopping';
    if (graceMs <= 0) return this.signalGroup('SIGKILL');
    if (this.killTimer !== undefined) return;
    this.signalGroup('SIGTERM');
    this.killTimer = setTimeout(() => this.signalGroup('SIGKILL'), graceMs);
  }

  /** SIGKILL now, the group included. */
  forceKill(reason: KillReason, code: string, detail: string): void {
    this.killedFor ??= { reason, code, detail, culprit: this.soleSuspect() };
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
