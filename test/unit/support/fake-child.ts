import type { ErrorSummary } from '../../../src/errors.js';
import type { SupervisorToChild } from '../../../src/ipc/protocol.js';
import type { DbOutage } from '../../../src/store/faults.js';
import type { LastWords, UncaughtError } from '../../../supervisor/last-words.js';
import type {
  ChildEvents,
  ChildExit,
  ChildSpec,
  ChildKill,
  KillReason,
  PoolChild,
  RetireReason,
  RunningJob,
} from '../../../supervisor/supervised-child.js';

let nextPid = 10_000;

/**
 * A child as ClassPool sees it, with no process: the test says when it is
 * ready, fails to start, finishes a job or crashes. Asked to retire, it
 * drains at once and exits 0, as a healthy child does.
 */
export class FakeChild implements PoolChild {
  readonly pid = nextPid++;
  readonly workerId: string;
  readonly config: ChildSpec['config'];
  readonly resultLimitBytes: number;
  readonly exited: Promise<ChildExit>;
  readonly sent: SupervisorToChild[] = [];
  jobsFinished = 0;
  killed: ChildKill | undefined;
  startupError: string | undefined;
  startupRestartable = false;
  retiring: RetireReason | undefined;
  dbOutage: DbOutage | undefined;
  lastWords: LastWords = { uncaught: undefined, lastRss: undefined, stderr: [] };
  readonly started = new Map<number, RunningJob>();
  private exit: ChildExit | undefined;
  private becameReady!: () => void;
  private readonly readied = new Promise<void>((resolve) => (this.becameReady = resolve));
  private resolveExit!: (exit: ChildExit) => void;

  constructor(
    start: ChildSpec,
    private readonly events: ChildEvents<FakeChild>,
  ) {
    this.workerId = start.workerId;
    this.config = start.config;
    this.resultLimitBytes = start.resultLimitBytes;
    this.exited = new Promise((resolve) => (this.resolveExit = resolve));
  }

  diedOf(uncaught: UncaughtError): void {
    this.lastWords.uncaught ??= uncaught;
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  // What the test makes the child do, as its messages and its exit.

  sayReady(): void {
    this.events.message(this, { type: 'ready' });
  }

  /** `retryable`: a start that may succeed on another try (a failed setup), not a handler that cannot load. */
  failStartup(message: string, retryable = false): void {
    this.events.message(this, {
      type: 'startup-failed',
      error: { name: 'Error', code: retryable ? 'HANDLER:SETUP_FAILED' : 'HANDLER:LOAD', message, retryable },
    });
    this.end({ code: 2, signal: null });
  }

  runJob(jobId: number): void {
    this.events.message(this, { type: 'jobs-started', count: 1 });
    this.events.message(this, {
      type: 'jobs-finished',
      jobs: [{ jobId, attempt: 1, outcome: 'SUCCEEDED', durationMs: 1 }],
    });
  }

  crash(): void {
    this.end({ code: 1, signal: null });
  }

  end(exit: ChildExit): void {
    if (!this.alive) return;
    this.exit = exit;
    this.becameReady();
    this.events.exit(this, exit);
    this.resolveExit(exit);
  }

  // PoolChild.

  send(message: SupervisorToChild): void {
    this.sent.push(message);
  }

  markReady(): void {
    this.becameReady();
  }

  startupFailed(error: ErrorSummary): void {
    this.startupError = error.message;
    this.startupRestartable = error.retryable;
  }

  reportOutage(outage: DbOutage | undefined): void {
    this.dbOutage = outage;
  }

  jobsFinishedBy(count: number): void {
    this.jobsFinished += count;
  }

  async untilReady(): Promise<string | undefined> {
    await this.readied;
    return this.alive ? undefined : (this.startupError ?? 'it ended before it was ready');
  }

  retire(reason: RetireReason, _graceMs: number): void {
    this.retiring ??= reason;
    queueMicrotask(() => this.end({ code: 0, signal: null }));
  }

  forceKill(reason: KillReason, code: string, detail: string): void {
    this.killed ??= { reason, code, detail, culprit: undefined };
    this.end({ code: null, signal: 'SIGKILL' });
  }

  soleSuspect(): RunningJob | undefined {
    return undefined;
  }
}
