/**
 * One per Queue, shared by every `waitFor` and every `events` iterator:
 * started on first use, stopped by `close()`. It listens for wake-ups
 * (PostgreSQL: LISTEN on leasehold_outcomes; SQLite: the watch on the WAL
 * file) and, while anything waits, polls every OUTCOME_POLL_MS as well, so a
 * broken or missing listener delays an answer and never loses one. Each wake
 * is one check, never one per waiter: one read of every job waited for that
 * has ended, and one read of the outcomes after the iterators' earliest
 * position. Bursts of wakes are one check, and checks take a bounded share
 * of the time (CoalescedCheck, OUTCOME_CHECK_PACE).
 */
import { retryDelayMs } from '../backoff.js';
import { InvalidInputError, NotFoundError, QueueClosedError } from '../errors.js';
import type { WakeWatch } from '../store/wake-watch.js';
import { TERMINAL_STATUSES, type JobRow, type ProducerStore, type TerminalStatus } from '../store/types.js';
import { CoalescedCheck, type CheckPace } from './coalesced-check.js';
import { checkJobId } from './controls.js';
import { checkClassName } from './enqueue.js';
import { positionOf } from './outcome-cursor.js';
import { feedStreams, OutcomeStream, type EventsOptions } from './outcome-streams.js';
import { Waiters, type WaitOptions } from './outcome-waiters.js';

/** How often it reads while anything waits, wake-ups or not: the longest a lost wake-up delays an answer. */
export const OUTCOME_POLL_MS = 1_000;
/**
 * The shortest time between two checks (a burst of wake-ups within it is one
 * check), and the share of the time checks may take, so that under load the
 * readers' cost stays a small part of what the queue does (docs/performance.md,
 * section 19).
 */
export const OUTCOME_CHECK_PACE: CheckPace = { gapMs: 25, busyShare: 0.1, maxRestMs: 250 };
/** Between tries to start listening when the first failed (polling meanwhile): 0.1 s doubling to 10 s, with jitter. */
const LISTEN_AGAIN = { baseSeconds: 0.1, maxSeconds: 10, jitter: true };

export type OutcomeStore = Pick<
  ProducerStore,
  'jobGet' | 'jobsEnded' | 'outcomeEventsAfter' | 'outcomeLatest' | 'outcomesSubscribe'
>;

const isTerminal = (status: string): status is TerminalStatus =>
  (TERMINAL_STATUSES as readonly string[]).includes(status);

export class OutcomeListener {
  private readonly waiters = new Waiters(() => this.pollWhileWaiting());
  private readonly streams = new Set<OutcomeStream>();
  private readonly checks = new CoalescedCheck(
    () => this.check(),
    (error) => this.report(error),
    OUTCOME_CHECK_PACE,
  );
  private poll: NodeJS.Timeout | undefined;
  private listening: Promise<void> | undefined;
  private watch: WakeWatch | undefined;
  private listenAgain: NodeJS.Timeout | undefined;
  private listenFailures = 0;
  /** A problem was reported and no check has succeeded since: one warning per outage. */
  private failing = false;
  private closed = false;

  constructor(private readonly store: OutcomeStore) {}

  /** The job once it has ended (at once if it has); see Queue.waitFor. */
  async waitFor(id: number, options: WaitOptions = {}): Promise<JobRow> {
    checkJobId(id);
    const { timeoutMs, signal } = options;
    if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs >= 0))
      throw new InvalidInputError('TIMEOUT', `timeoutMs must be a number of ms >= 0, got ${String(timeoutMs)}`);
    signal?.throwIfAborted();
    this.throwIfClosed();
    // Listening before the first read: an end that read cannot see yet commits after it, and wakes a check.
    await this.listen();
    this.throwIfClosed();
    const waiter = this.waiters.add(id, options);
    try {
      const job = await this.store.jobGet({ id });
      if (job === undefined) waiter.fail(new NotFoundError(`job ${id}`));
      else if (isTerminal(job.status)) waiter.resolve(job);
    } catch (error) {
      waiter.fail(error);
    }
    return waiter.promise;
  }

  /** An iterator of outcomes; see Queue.events. */
  events(options: EventsOptions = {}): OutcomeStream {
    this.throwIfClosed();
    if (options.classes !== undefined) for (const name of options.classes) checkClassName(name);
    const start = options.after === undefined ? undefined : positionOf(options.after);
    const stream: OutcomeStream = new OutcomeStream(
      options.classes,
      () => this.checks.wake(),
      (ended) => {
        this.streams.delete(ended);
        this.pollWhileWaiting();
      },
    );
    this.streams.add(stream);
    stream.endOnAbort(options.signal);
    this.pollWhileWaiting();
    void this.listen();
    if (start !== undefined) stream.start(start);
    else
      this.store.outcomeLatest().then(
        (latest) => stream.start(latest),
        (error: unknown) => stream.end({ error }),
      );
    return stream;
  }

  /** Every wait ends (QueueClosedError) and every iterator finishes; resolves once nothing runs. Safe twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const stream of [...this.streams]) stream.end();
    this.waiters.failAll(new QueueClosedError());
    clearInterval(this.poll);
    clearTimeout(this.listenAgain);
    await this.checks.stop();
    await this.listening;
    await this.watch?.stop();
  }

  private throwIfClosed(): void {
    if (this.closed) throw new QueueClosedError();
  }

  /** Start listening once; resolves when it listens, or when it could not (it polls then, and tries again later). */
  private listen(): Promise<void> {
    this.listening ??= this.store
      .outcomesSubscribe(
        () => this.checks.wake(),
        (error) => this.report(error),
      )
      .then(
        async (watch) => {
          this.listenFailures = 0;
          if (this.closed) await watch.stop();
          else this.watch = watch;
          this.checks.wake();
        },
        (error: unknown) => {
          this.report(error);
          this.listenFailures += 1;
          if (this.closed) return;
          this.listenAgain = setTimeout(
            () => {
              this.listening = undefined;
              void this.listen();
            },
            retryDelayMs(LISTEN_AGAIN, this.listenFailures),
          );
          this.listenAgain.unref();
        },
      );
    return this.listening;
  }

  /** The poll runs while a waitFor or an iterator is open, and keeps the process alive for them. */
  private pollWhileWaiting(): void {
    const waiting = !this.closed && (this.waiters.size > 0 || this.streams.size > 0);
    if (waiting && this.poll === undefined) this.poll = setInterval(() => this.checks.wake(), OUTCOME_POLL_MS);
    if (!waiting && this.poll !== undefined) {
      clearInterval(this.poll);
      this.poll = undefined;
    }
  }

  /** The two reads are independent: on PostgreSQL they run at once, on two connections. */
  private async check(): Promise<void> {
    this.watch?.rearm();
    const ids = this.waiters.ids();
    const [ended, more] = await Promise.all([
      ids.length === 0 ? [] : this.store.jobsEnded({ ids }),
      feedStreams(this.streams, this.store),
    ]);
    this.waiters.settle(ended);
    this.failing = false;
    if (more) this.checks.wake();
  }

  private report(error: unknown): void {
    if (this.failing || this.closed) return;
    this.failing = true;
    const message = error instanceof Error ? error.message : String(error);
    process.emitWarning(`leasehold: waiting for outcomes: ${message} (reading every ${OUTCOME_POLL_MS} ms meanwhile)`, {
      code: 'LEASEHOLD_OUTCOMES',
    });
  }
}
