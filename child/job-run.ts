import type { ClassConfig } from '../src/config/types.js';
import { coerceError, LeaseholdError, LeaseLostError, truncate, type ErrorSummary } from '../src/errors.js';
import type { JobOutcome, LogLevel } from '../src/protocol.js';
import { retryDelayMs } from '../src/queue/backoff.js';
import type { ClaimedJob, Store } from '../src/store/types.js';
import type { Handler, HandlerContext, HandlerLog } from './handler.js';

/** Why a job's signal was aborted; the code becomes the attempt's error code. */
export const ABORT = {
  leaseLost: () => new LeaseholdError('LEASE:LOST', 'the lease was taken back by someone else', { retryable: false }),
  timeout: (seconds: number) => new LeaseholdError('TIMEOUT:MAX_RUNTIME', `ran past max_runtime_seconds (${seconds}s)`),
  cancelled: () => new LeaseholdError('CANCELLED:BY_OPERATOR', 'cancelled by an operator', { retryable: false }),
  shutdown: (why: string) => new LeaseholdError('SHUTDOWN:STOP', `stopped: ${why}`),
};

export interface JobRunDeps {
  store: Store;
  config: ClassConfig;
  handler: Handler;
  resultLimitBytes: number;
  log: (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;
}

export interface JobRunResult {
  outcome: JobOutcome;
  durationMs: number;
  error?: ErrorSummary;
}

/**
 * One claimed job in a child's hands: start it (fenced), keep its lease alive,
 * run the handler with an AbortSignal, then write the outcome exactly once,
 * fenced by the lease token. Handler work never runs inside a transaction.
 */
export class JobRun {
  private readonly controller = new AbortController();
  private readonly ref: { id: number; leaseToken: string };
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private runtimeTimer: NodeJS.Timeout | undefined;
  private leaseLost = false;
  private settlement: Promise<JobRunResult> | undefined;
  private readonly startedAt = Date.now();

  constructor(
    private readonly deps: JobRunDeps,
    readonly job: ClaimedJob,
  ) {
    this.ref = { id: job.id, leaseToken: job.leaseToken };
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  /** Abort the handler's signal; the first reason given is the one that counts. */
  abort(reason: LeaseholdError): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** Mark the job RUNNING. False when the lease was already gone (nothing runs). */
  async start(): Promise<boolean> {
    try {
      await this.deps.store.jobStart({ ...this.ref, leaseMs: this.leaseMs });
      return true;
    } catch (error) {
      if (error instanceof LeaseLostError) return false;
      throw error;
    }
  }

  /** Run the handler to its end and write the outcome. */
  async run(): Promise<JobRunResult> {
    const { config } = this.deps;
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), config.heartbeat_seconds * 1000);
    this.runtimeTimer = setTimeout(() => this.abort(ABORT.timeout(config.max_runtime_seconds)), config.max_runtime_seconds * 1000);
    let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
    try {
      const payload: unknown = JSON.parse(this.job.payload);
      const value = await this.deps.handler(
        { id: this.job.id, class: this.job.class, payload, attempt: this.job.attempt },
        this.context(),
      );
      outcome = { ok: true, value };
    } catch (error) {
      outcome = { ok: false, error };
    }
    return this.settle(() => (outcome.ok ? this.complete(outcome.value) : this.fail(outcome.error)));
  }

  /**
   * Write the outcome now, without waiting for the handler (the child is
   * being stopped): a timed-out job fails with its timeout, anything else is
   * handed back without spending a retry.
   */
  settleNow(): Promise<JobRunResult> {
    const reason = this.controller.signal.reason as unknown;
    return this.settle(() =>
      reason instanceof LeaseholdError && reason.code !== 'SHUTDOWN:STOP' ? this.fail(reason) : this.release('stopped before the handler finished'),
    );
  }

  /** Exactly one outcome write per run, whoever asks first. */
  private settle(write: () => Promise<Omit<JobRunResult, 'durationMs'>>): Promise<JobRunResult> {
    this.settlement ??= (async () => {
      clearInterval(this.heartbeatTimer);
      clearTimeout(this.runtimeTimer);
      const result = this.leaseLost ? { outcome: 'LEASE_LOST' as const } : await this.fenced(write);
      return { ...result, durationMs: Date.now() - this.startedAt };
    })();
    return this.settlement;
  }

  private async fenced(write: () => Promise<Omit<JobRunResult, 'durationMs'>>): Promise<Omit<JobRunResult, 'durationMs'>> {
    try {
      return await write();
    } catch (error) {
      if (error instanceof LeaseLostError) return { outcome: 'LEASE_LOST' };
      throw error;
    }
  }

  private async complete(value: unknown): Promise<Omit<JobRunResult, 'durationMs'>> {
    const result = value === undefined ? null : JSON.stringify(value);
    if (result !== null && Buffer.byteLength(result) > this.deps.resultLimitBytes) {
      const tooLarge = new LeaseholdError(
        'INVALID_INPUT:RESULT_TOO_LARGE',
        `result is ${Buffer.byteLength(result)} bytes, over the ${this.deps.resultLimitBytes}-byte limit`,
        { retryable: false },
      );
      return this.fail(tooLarge);
    }
    await this.deps.store.jobCompleteIfHeld({ ...this.ref, result });
    return { outcome: 'SUCCEEDED' };
  }

  private async fail(thrown: unknown): Promise<Omit<JobRunResult, 'durationMs'>> {
    const reason = this.controller.signal.reason as unknown;
    if (reason instanceof LeaseholdError && reason.code === 'SHUTDOWN:STOP') return this.release('shutdown');
    // After an abort the abort's reason explains the failure better than the handler's AbortError.
    const error = coerceError(reason instanceof LeaseholdError ? reason : thrown);
    const handlerSaid = reason instanceof LeaseholdError && thrown !== reason ? coerceError(thrown).message : undefined;
    const detail = truncate(handlerSaid === undefined ? error.message : `${error.message} (handler: ${handlerSaid})`);
    const delay = retryDelayMs(
      { baseSeconds: this.deps.config.backoff.base_seconds, maxSeconds: this.deps.config.backoff.max_seconds, jitter: this.deps.config.backoff.jitter },
      this.job.attempt,
    );
    const failed = await this.deps.store.jobFailIfHeld({ ...this.ref, error: { code: error.code, detail, retryable: error.retryable }, retryDelayMs: delay });
    return { outcome: failed.status, error: { ...error, message: detail } };
  }

  private async release(reason: string): Promise<Omit<JobRunResult, 'durationMs'>> {
    await this.deps.store.jobReleaseIfHeld({ ...this.ref, reason });
    return { outcome: 'RELEASED' };
  }

  private get leaseMs(): number {
    return this.deps.config.lease_seconds * 1000;
  }

  /** Renew the lease; learn of a cancel; on a lost lease abort at once and write nothing more. */
  private async heartbeat(): Promise<void> {
    if (this.leaseLost || this.settlement !== undefined) return;
    try {
      const beat = await this.deps.store.leaseExtend({ ...this.ref, leaseMs: this.leaseMs });
      if (beat.cancelRequested) this.abort(ABORT.cancelled());
    } catch (error) {
      this.onWriteError(error, 'heartbeat');
    }
  }

  private onWriteError(error: unknown, what: string): void {
    if (error instanceof LeaseLostError) {
      this.leaseLost = true;
      this.abort(ABORT.leaseLost());
      this.deps.log('warn', `lease lost on ${what}: aborting the job`, { job_id: this.job.id, attempt: this.job.attempt, event: 'LEASE_LOST' });
    } else {
      this.deps.log('warn', `${what} failed; will try again`, { job_id: this.job.id, err: coerceError(error) });
    }
  }

  private context(): HandlerContext {
    const labels = { job_id: this.job.id, attempt: this.job.attempt };
    const log = (level: LogLevel) => (msg: string, fields: Record<string, unknown> = {}) => this.deps.log(level, msg, { ...fields, ...labels });
    const handlerLog: HandlerLog = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
    return {
      signal: this.controller.signal,
      leaseToken: this.job.leaseToken,
      log: handlerLog,
      heartbeat: async () => {
        await this.heartbeat();
        if (this.leaseLost) throw ABORT.leaseLost();
      },
      progress: async (value: unknown) => {
        try {
          await this.deps.store.jobProgress({ ...this.ref, progress: JSON.stringify(value ?? null) });
        } catch (error) {
          this.onWriteError(error, 'progress');
          throw error;
        }
      },
    };
  }
}
