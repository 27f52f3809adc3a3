/**
 * The open `waitFor` calls of a Queue, by job id: one read of all their ids
 * answers every one of them, however many wait. Each settles once: with its
 * job, with WaitTimeoutError at its deadline, with its signal's reason, or
 * with the error that ends every wait (the queue closed).
 */
import { WaitTimeoutError } from '../errors.js';
import type { JobRow } from '../store/types.js';

export interface WaitOptions {
  /** Give up after this many ms: WaitTimeoutError (TIMEOUT:WAIT). None: wait as long as it takes. */
  timeoutMs?: number;
  /** Give up when it aborts: the promise rejects with the signal's reason (an AbortError unless one was given). */
  signal?: AbortSignal;
}

/** One waitFor call: settled once, then gone from the registry. */
export interface Waiter {
  readonly promise: Promise<JobRow>;
  resolve(job: JobRow): void;
  fail(error: unknown): void;
}

export class Waiters {
  private readonly byId = new Map<number, Set<Waiter>>();

  /** `onChange`: a waiter came or went (the listener polls only while any waits). */
  constructor(private readonly onChange: () => void) {}

  get size(): number {
    return this.byId.size;
  }

  /** The ids waited for, each once. */
  ids(): number[] {
    return [...this.byId.keys()];
  }

  add(id: number, options: WaitOptions): Waiter {
    let resolve!: (job: JobRow) => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<JobRow>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // It may settle before waitFor hands it to the caller (an abort while the first read runs): not unhandled.
    promise.catch(() => undefined);
    const { signal, timeoutMs } = options;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const waiters = this.byId.get(id) ?? new Set<Waiter>();
    /** The first settlement wins; it takes the waiter out of the registry. */
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      waiters.delete(waiter);
      if (waiters.size === 0) this.byId.delete(id);
      this.onChange();
      return true;
    };
    const waiter: Waiter = {
      promise,
      resolve: (job) => {
        if (settle()) resolve(job);
      },
      fail: (error) => {
        if (settle()) reject(error);
      },
    };
    const onAbort = () => waiter.fail(signal?.reason);
    waiters.add(waiter);
    this.byId.set(id, waiters);
    this.onChange();
    if (timeoutMs !== undefined) timer = setTimeout(() => waiter.fail(new WaitTimeoutError(id, timeoutMs)), timeoutMs);
    if (signal?.aborted === true) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    return waiter;
  }

  /** Every waiter of each job given (jobs that ended) gets its job. */
  settle(jobs: readonly JobRow[]): void {
    for (const job of jobs) for (const waiter of [...(this.byId.get(job.id) ?? [])]) waiter.resolve(job);
  }

  failAll(error: unknown): void {
    for (const waiters of [...this.byId.values()]) for (const waiter of [...waiters]) waiter.fail(error);
  }
}
