import type { ClassConfig } from '../src/config/schema.js';
import { coerceError, errorStack, LeaseholdError, LeaseLostError, truncate, type ErrorSummary } from '../src/errors.js';
import type { LogLevel } from '../src/limits.js';
import { backoffPolicy, retryDelayMs } from '../src/backoff.js';
import { claimRecord } from '../src/store/facts.js';
import { dbFaultOf } from '../src/store/faults.js';
import { AttemptLogBuffer } from '../src/store/job-logs.js';
import type { AttemptCost, AttemptLogs, ClaimedJob, Verdict, WorkerStore } from '../src/store/types.js';
import type { AttemptMeter, CostMeter } from './attempt-meter.js';
import type { Deadline, Deadlines } from './deadlines.js';
import { attemptSpan, endAttemptSpan } from './attempt-span.js';
import type { AttemptSpan } from '../src/tracing/spans.js';
import { handlerContext, parsePayload, type HandlerContext, type PayloadParser } from '../src/handler.js';
import type { AttemptBody } from './middleware.js';

/**
 * A job still running this long gets its start written on its own; a
 * shorter one has its start stamped together with its outcome, which saves
 * a transaction per job.
 */
export const START_WRITE_DELAY_MS = 50;

/** Why a job's signal was aborted; the code becomes the attempt's error code. */
export const ABORT = {
  leaseLost: () => new LeaseholdError('LEASE:LOST', 'the lease was taken back by someone else', { retryable: false }),
  leaseExpired: () =>
    new LeaseholdError(
      'LEASE:LOST',
      'the lease ran out before a renewal could be written (the database is away or slow)',
      { retryable: false },
    ),
  timeout: (seconds: number) => new LeaseholdError('TIMEOUT:MAX_RUNTIME', `ran past max_runtime_seconds (${seconds}s)`),
  cancelled: () => new LeaseholdError('CANCELLED:BY_OPERATOR', 'cancelled by an operator', { retryable: false }),
  shutdown: (why: string) => new LeaseholdError('SHUTDOWN:STOP', `stopped: ${why}`),
};

/** A verdict about a job whose handler never began: it goes back to the queue, keeping its place, no retry spent. */
export function released(reason: string): RunVerdict {
  return { verdict: { type: 'release', reason }, startedAt: null };
}

/** A job cancelled while it waited its turn: it ends CANCELLED without running. */
export function cancelledBeforeStart(): RunVerdict {
  const error = ABORT.cancelled();
  return {
    verdict: { type: 'fail', error: { code: error.code, detail: error.message, retryable: false }, retryDelayMs: 0 },
    startedAt: null,
  };
}

/** What a run writes itself: a slow job's start, and the handler's progress. */
export type JobRunStore = Pick<WorkerStore, 'jobStart' | 'jobProgress' | 'jobParents' | 'clock'>;

export interface JobRunDeps {
  store: JobRunStore;
  config: ClassConfig;
  /** The handler inside the class's middleware (middleware.ts): one call per attempt. */
  handler: AttemptBody;
  /** What the handler module's `setup` returned in this child: every job's ctx.resources. */
  resources: unknown;
  /** The handler module's `parse` export, which the payload goes through first. */
  parse?: PayloadParser;
  resultLimitBytes: number;
  log: (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;
  /** Renew the leases now (ctx.heartbeat); the loop renews them every heartbeat_seconds anyway. */
  heartbeat: () => Promise<void>;
  /** The child's readings of CPU and memory, which each run's cost is measured with. */
  costs: CostMeter;
  /** The child's one timer for its jobs' runtimes and start writes. */
  deadlines: Deadlines;
}

/** A run's verdict, with what the supervisor is told about it. */
export interface RunVerdict {
  verdict: Verdict;
  /** Set when the start was not written yet: stamped with the outcome. */
  startedAt: number | null;
  error?: ErrorSummary;
  /** What the run cost up to its verdict; none for a job whose handler never began. */
  cost?: AttemptCost;
  /** The lines the handler logged (ctx.log); none when it logged nothing. */
  logs?: AttemptLogs;
}

/**
 * One job in a child's hands: runs the handler with an AbortSignal and turns
 * what it did into a verdict. It writes nothing about the outcome itself (the
 * claim loop writes verdicts in batches, fenced); it writes only a slow job's
 * start and the handler's progress.
 */
export class JobRun {
  /** Why the run was aborted; the first reason given counts. */
  private abortReason: LeaseholdError | undefined;
  /**
   * Made when the handler first reads ctx.signal: building an AbortController
   * costs about as much as a no-op job's own work, and most handlers never look.
   */
  private controller: AbortController | undefined;
  private readonly ref: { id: number; leaseToken: string };
  private runtimeDeadline: Deadline | undefined;
  private startDeadline: Deadline | undefined;
  private startWritten = false;
  private startWrite: Promise<void> | undefined;
  private lost = false;
  private meter: AttemptMeter | undefined;
  /** Made at the handler's first ctx.log line: a job that logs nothing keeps and writes nothing. */
  private logBuffer: AttemptLogBuffer | undefined;
  /** On the store's clock, as the start is written: kept on the monotonic clock, so a step of the wall clock stretches no runtime. */
  readonly startedAt: number;
  /** The attempt's `process <class>` span: the handler runs in its context. */
  private readonly span: AttemptSpan;

  constructor(
    private readonly deps: JobRunDeps,
    readonly job: ClaimedJob,
  ) {
    this.ref = { id: job.id, leaseToken: job.leaseToken };
    this.startedAt = deps.store.clock.now();
    this.span = attemptSpan(job);
  }

  /** How long since the run began. */
  runningMs(): number {
    return this.deps.store.clock.now() - this.startedAt;
  }

  /** Abort the handler's signal; the first reason given is the one that counts. */
  abort(reason: LeaseholdError): void {
    if (this.abortReason !== undefined) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }

  /** The lease is gone (taken back, or run out): abort, and never write about this job again. */
  leaseLost(reason = ABORT.leaseLost()): void {
    if (this.lost) return;
    this.lost = true;
    this.abort(reason);
    this.deps.log('warn', `lease lost: aborting the job (${reason.message})`, {
      job_id: this.job.id,
      attempt: this.job.attempt,
      event: 'LEASE_LOST',
    });
  }

  /** Run the handler to its end. Null: the lease was lost, there is nothing to write. */
  async run(): Promise<RunVerdict | null> {
    const { config, deadlines } = this.deps;
    this.runtimeDeadline = deadlines.after(config.max_runtime_seconds * 1000, () =>
      this.abort(ABORT.timeout(config.max_runtime_seconds)),
    );
    this.startDeadline = deadlines.after(START_WRITE_DELAY_MS, () => (this.startWrite = this.writeStart()));
    const meter = (this.meter = this.deps.costs.start());
    let verdict: RunVerdict;
    try {
      const stored: unknown = JSON.parse(this.job.payload);
      const { parse } = this.deps;
      const payload = parse === undefined ? stored : await parsePayload(parse, stored);
      const value = await this.span.run(() =>
        this.deps.handler(
          { id: this.job.id, class: this.job.class, payload, attempt: this.job.attempt },
          this.context(),
        ),
      );
      verdict = this.success(value);
    } catch (error) {
      verdict = this.failure(error);
    } finally {
      deadlines.cancel(this.runtimeDeadline);
      deadlines.cancel(this.startDeadline);
    }
    verdict = { ...verdict, cost: meter.read(), logs: this.logBuffer?.logs() };
    endAttemptSpan(this.span, verdict);
    // A start write in flight must land before the outcome, or the outcome would stamp the start twice.
    if (this.startWrite !== undefined) {
      await this.startWrite;
      if (verdict.startedAt !== null && this.startWritten) verdict = { ...verdict, startedAt: null };
    }
    return this.lost ? null : verdict;
  }

  /**
   * The verdict when the child must go before the handler finishes: a job
   * that timed out fails with its timeout, anything else goes back to the
   * queue without spending a retry.
   */
  async verdictNow(): Promise<RunVerdict | null> {
    await this.startWrite;
    if (this.lost) return null;
    const reason = this.abortReason;
    const cost = this.meter?.read();
    const logs = this.logBuffer?.logs();
    const verdict: RunVerdict =
      reason instanceof LeaseholdError && reason.code !== 'SHUTDOWN:STOP'
        ? { ...this.failure(reason), cost, logs }
        : {
            verdict: { type: 'release', reason: 'stopped before the handler finished' },
            startedAt: this.unwrittenStart,
            cost,
            logs,
          };
    endAttemptSpan(this.span, verdict);
    return verdict;
  }

  /** A resident-set reading taken while the handler runs (the run loop's periodic tick). */
  observeRss(rssBytes: number): void {
    this.meter?.observe(rssBytes);
  }

  private get unwrittenStart(): number | null {
    return this.startWritten ? null : this.startedAt;
  }

  private success(value: unknown): RunVerdict {
    const result = value === undefined ? null : JSON.stringify(value);
    const bytes = result === null ? 0 : Buffer.byteLength(result);
    if (bytes > this.deps.resultLimitBytes) {
      const message = `result is ${bytes} bytes, over the ${this.deps.resultLimitBytes}-byte limit`;
      return this.failure(new LeaseholdError('INVALID_INPUT:RESULT_TOO_LARGE', message, { retryable: false }));
    }
    return { verdict: { type: 'complete', result }, startedAt: this.unwrittenStart };
  }

  private failure(thrown: unknown): RunVerdict {
    const reason = this.abortReason;
    const aborted = reason instanceof LeaseholdError;
    if (aborted && reason.code === 'SHUTDOWN:STOP') {
      return { verdict: { type: 'release', reason: 'shutdown' }, startedAt: this.unwrittenStart };
    }
    // After an abort, the abort's reason explains the failure better than the handler's AbortError.
    const error = coerceError(aborted ? reason : thrown);
    const handlerSaid = aborted && thrown !== reason ? coerceError(thrown).message : undefined;
    const detail = truncate(handlerSaid === undefined ? error.message : `${error.message} (handler: ${handlerSaid})`);
    const delay = retryDelayMs(backoffPolicy(this.deps.config.backoff), this.job.attempt);
    // The abort reason's own stack is ours (a timer's); what the handler threw shows where it was.
    const stack = thrown === reason ? undefined : errorStack(thrown);
    return {
      verdict: {
        type: 'fail',
        error: { code: error.code, detail, retryable: error.retryable, stack },
        retryDelayMs: delay,
      },
      startedAt: this.unwrittenStart,
      error: { ...error, message: detail },
    };
  }

  private async writeStart(): Promise<void> {
    try {
      await this.deps.store.jobStart({
        ...this.ref,
        leaseMs: this.deps.config.lease_seconds * 1000,
        startedAt: this.startedAt,
        claim: claimRecord(this.job),
      });
      this.startWritten = true;
    } catch (error) {
      this.onWriteError(error, 'start');
    }
  }

  private onWriteError(error: unknown, what: string): void {
    if (error instanceof LeaseLostError) this.leaseLost();
    // A database that is away is logged once, as an outage: the outcome will stamp the start.
    else if (dbFaultOf(error) === undefined)
      this.deps.log('warn', `${what} failed`, { job_id: this.job.id, err: coerceError(error) });
  }

  private signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortReason !== undefined) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  private context(): HandlerContext {
    const labels = { job_id: this.job.id, attempt: this.job.attempt, ...this.span.logFields };
    return handlerContext({
      signal: () => this.signal(),
      leaseToken: this.job.leaseToken,
      resources: this.deps.resources,
      log: (level, msg, fields) => {
        (this.logBuffer ??= new AttemptLogBuffer()).add(level, msg, fields);
        this.deps.log(level, msg, { ...fields, ...labels });
      },
      heartbeat: async () => {
        await this.deps.heartbeat();
        if (this.lost) throw ABORT.leaseLost();
      },
      parents: () => this.deps.store.jobParents({ id: this.job.id }),
      progress: async (json) => {
        try {
          await this.deps.store.jobProgress({ ...this.ref, progress: json });
        } catch (error) {
          this.onWriteError(error, 'progress');
          throw error;
        }
      },
    });
  }
}
