/**
 * Queue.events iterators, fed by one shared read: each holds its own
 * position and a small buffer. A read starts at the earliest position of
 * the iterators that want more, and each takes the rows after its own
 * position: those of its classes as outcomes, the others only move it on.
 */
import { outcomeOf, type OutcomePosition } from '../store/outcome-rows.js';
import type { ProducerStore, TerminalStatus } from '../store/types.js';
import { cursorOf, isAfter } from './outcome-cursor.js';
import type { JobClass } from '../job-types.js';

/** Terminal events one read takes at most; an iterator holding this many outcomes not yet taken is not read for. */
export const OUTCOME_PAGE = 1_000;

/** A job that ended, as Queue.events yields it. */
export interface Outcome<C extends JobClass = JobClass> {
  /** The job's id. */
  id: number;
  class: C;
  status: TerminalStatus;
  /** The code its end recorded (null for a success). */
  error_code: string | null;
  /** When it ended (epoch ms): the time of its terminal event. */
  finished_at: number;
  /** Opaque: hand it back as `after` to go on right after this outcome. */
  cursor: string;
}

export interface EventsOptions<C extends JobClass = JobClass> {
  /** Only outcomes of these classes (all when absent). */
  classes?: C[];
  /** A cursor an outcome carried: go on right after it. `'0'`: from the oldest outcome kept. Absent: from now. */
  after?: string;
  /** Ends the iteration: a pending `next()` rejects with the signal's reason. */
  signal?: AbortSignal;
}

interface PendingNext {
  resolve: (result: IteratorResult<Outcome>) => void;
  reject: (error: unknown) => void;
}

/** One events iterator, untyped (Queue.events gives it its classes' type). */
export class OutcomeStream implements AsyncIterableIterator<Outcome> {
  private position: OutcomePosition | undefined;
  private readonly buffer: Outcome[] = [];
  private readonly pending: PendingNext[] = [];
  private ended = false;
  /** The error that ended it, for the next `next()` when none was waiting. */
  private failure: { error: unknown } | undefined;
  private readonly classes: ReadonlySet<string> | undefined;
  private signal: AbortSignal | undefined;
  private readonly onAbort = () => this.end({ error: this.signal?.reason });

  /** `wake`: it wants a read; `leave`: it ended. */
  constructor(
    classes: readonly string[] | undefined,
    private readonly wake: () => void,
    private readonly leave: (stream: OutcomeStream) => void,
  ) {
    this.classes = classes === undefined ? undefined : new Set(classes);
  }

  /** It ends when the signal aborts (at once if it has). */
  endOnAbort(signal: AbortSignal | undefined): void {
    this.signal = signal;
    if (signal?.aborted === true) this.onAbort();
    else signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Where it starts: known at once from a cursor, or once the newest outcome was read. */
  start(position: OutcomePosition): void {
    if (this.ended) return;
    this.position = position;
    this.wake();
  }

  /** Where it stands, when it wants a read. */
  get wants(): OutcomePosition | undefined {
    return this.ended || this.buffer.length >= OUTCOME_PAGE ? undefined : this.position;
  }

  /**
   * One row of a shared read, ignored unless it is past this stream's
   * position: `outcome` makes its outcome (each stream its own object), none
   * for a row that ends nothing.
   */
  offer(position: OutcomePosition, jobClass: string, outcome: (() => Outcome) | undefined): void {
    if (this.ended || this.position === undefined || !isAfter(position, this.position)) return;
    this.position = position;
    if (outcome === undefined || (this.classes !== undefined && !this.classes.has(jobClass))) return;
    const next = this.pending.shift();
    if (next === undefined) this.buffer.push(outcome());
    else next.resolve({ value: outcome(), done: false });
  }

  async next(): Promise<IteratorResult<Outcome>> {
    const value = this.buffer.shift();
    if (value !== undefined) {
      // Just below a full buffer again: read on, if the last read left more behind.
      if (this.buffer.length === OUTCOME_PAGE - 1) this.wake();
      return { value, done: false };
    }
    if (this.failure !== undefined) {
      const { error } = this.failure;
      this.failure = undefined;
      throw error;
    }
    if (this.ended) return { value: undefined, done: true };
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  }

  async return(): Promise<IteratorResult<Outcome>> {
    this.end();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** No more outcomes: a `next()` waiting (or the next one) gets `failure`'s error, or the end. Safe twice. */
  end(failure?: { error: unknown }): void {
    if (this.ended) return;
    this.ended = true;
    this.buffer.length = 0;
    this.signal?.removeEventListener('abort', this.onAbort);
    const waiting = this.pending.splice(0);
    for (const next of waiting)
      if (failure === undefined) next.resolve({ value: undefined, done: true });
      else next.reject(failure.error);
    if (failure !== undefined && waiting.length === 0) this.failure = failure;
    this.leave(this);
  }
}

/**
 * One read for every stream that wants more, from the earliest of their
 * positions, handed to each of them; true when the page came back full
 * (more may follow at once).
 */
export async function feedStreams(
  streams: Iterable<OutcomeStream>,
  store: Pick<ProducerStore, 'outcomeEventsAfter'>,
): Promise<boolean> {
  const hungry = [...streams].filter((stream) => stream.wants !== undefined);
  if (hungry.length === 0) return false;
  const from = hungry.map((stream) => stream.wants!).reduce((earliest, at) => (isAfter(earliest, at) ? at : earliest));
  const rows = await store.outcomeEventsAfter({ after: from, limit: OUTCOME_PAGE });
  for (const row of rows) {
    const position = { txid: row.txid, id: row.id };
    const facts = outcomeOf(row);
    const outcome =
      facts === undefined
        ? undefined
        : (): Outcome => ({
            id: row.job_id,
            class: row.class,
            status: facts.status,
            error_code: facts.error_code,
            finished_at: row.ts,
            cursor: cursorOf(position),
          });
    for (const stream of hungry) stream.offer(position, row.class, outcome);
  }
  return rows.length === OUTCOME_PAGE;
}
