/**
 * The rules under Queue.waitFor and Queue.events, with fakes and fake
 * timers: the cursor, what a terminal event says, how wake-ups become
 * checks, how waiters settle, and how one read feeds every iterator.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WaitTimeoutError } from '../../src/errors.js';
import { CoalescedCheck } from '../../src/queue/coalesced-check.js';
import { cursorOf, isAfter, positionOf } from '../../src/queue/outcome-cursor.js';
import { feedStreams, OUTCOME_PAGE, OutcomeStream, type Outcome } from '../../src/queue/outcome-streams.js';
import { Waiters } from '../../src/queue/outcome-waiters.js';
import { OUTCOMES_START, outcomeOf, type OutcomeEventRow, type OutcomePosition } from '../../src/store/outcome-rows.js';
import type { JobRow } from '../../src/store/types.js';

const row = (id: number, overrides: Partial<OutcomeEventRow> = {}): OutcomeEventRow => ({
  id,
  txid: '0',
  job_id: 100 + id,
  class: 'email',
  event: 'SUCCEEDED',
  detail: '{"attempt":1}',
  job_error_code: null,
  ts: 1_000 + id,
  ...overrides,
});

describe('the cursor', () => {
  it("round-trips a position; '0' is the start; text it never gave out is refused", () => {
    const position = { txid: '18446744073709551615', id: 42 };
    expect(positionOf(cursorOf(position))).toEqual(position);
    expect(positionOf('0')).toEqual(OUTCOMES_START);
    for (const bad of ['', '1', '1.', '.1', '-1.2', '1.2.3', 'a.b', '1.99999999999999999'])
      expect(() => positionOf(bad)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT:CURSOR' }));
  });

  it('orders by transaction id as a number, then by event id', () => {
    const at = (txid: string, id: number): OutcomePosition => ({ txid, id });
    expect(isAfter(at('10', 1), at('9', 5))).toBe(true);
    expect(isAfter(at('9', 5), at('10', 1))).toBe(false);
    expect(isAfter(at('9', 6), at('9', 5))).toBe(true);
    expect(isAfter(at('9', 5), at('9', 5))).toBe(false);
    expect(isAfter(at('9007199254740993', 1), at('9007199254740992', 2))).toBe(true);
  });
});

describe('what a terminal event says', () => {
  it("a cancel request ends nothing; a success has no code; an end names the event's code, else the job's", () => {
    const cancelRequest = row(1, { event: 'CANCELLED', detail: '{"stage":"requested","owner_id":"w"}' });
    expect(outcomeOf(cancelRequest)).toBeUndefined();
    expect(outcomeOf(row(2, { job_error_code: 'OLD:CODE' }))).toEqual({ status: 'SUCCEEDED', error_code: null });
    const failed = row(3, { event: 'FAILED', detail: '{"code":"UPSTREAM:DOWN"}', job_error_code: 'OTHER:X' });
    expect(outcomeOf(failed)).toEqual({ status: 'FAILED', error_code: 'UPSTREAM:DOWN' });
    const cancelled = row(4, { event: 'CANCELLED', detail: '{"stage":"done","from":"QUEUED"}', job_error_code: 'A:B' });
    expect(outcomeOf(cancelled)).toEqual({ status: 'CANCELLED', error_code: 'A:B' });
  });
});

describe('CoalescedCheck', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  /** A check that takes `ms` and counts its starts. */
  function counted(ms: number, fail = false) {
    const starts: number[] = [];
    const check = async () => {
      starts.push(Date.now());
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (fail) throw new Error('database away');
    };
    return { starts, check };
  }

  it('a burst is one check; a wake during a check is one more, at least the gap after the last start', async () => {
    const { starts, check } = counted(5);
    const loop = new CoalescedCheck(check, () => undefined, { gapMs: 20, busyShare: 0.5, maxRestMs: 1_000 });
    const begin = Date.now();
    for (let i = 0; i < 10; i++) loop.wake();
    await vi.advanceTimersByTimeAsync(1);
    expect(starts).toEqual([begin]);
    loop.wake();
    loop.wake();
    await vi.advanceTimersByTimeAsync(100);
    expect(starts).toEqual([begin, begin + 20]);
    await vi.advanceTimersByTimeAsync(100);
    expect(starts).toHaveLength(2);
    await loop.stop();
  });

  it('checks that grow slow grow rarer: busy at most their share of the time', async () => {
    const { starts, check } = counted(10);
    const loop = new CoalescedCheck(check, () => undefined, { gapMs: 20, busyShare: 0.1, maxRestMs: 1_000 });
    const begin = Date.now();
    loop.wake();
    await vi.advanceTimersByTimeAsync(1);
    loop.wake();
    await vi.advanceTimersByTimeAsync(200);
    // 10 ms busy, then 90 ms of rest: the next starts 100 ms after the first, not at the 20 ms gap
    expect(starts).toEqual([begin, begin + 100]);
    await loop.stop();
  });

  it('a failed check is reported, and the next wake tries again; stop waits for the check running, then none start', async () => {
    const { starts, check } = counted(10, true);
    const errors: unknown[] = [];
    const loop = new CoalescedCheck(check, (error) => errors.push(error), {
      gapMs: 20,
      busyShare: 0.5,
      maxRestMs: 1_000,
    });
    loop.wake();
    await vi.advanceTimersByTimeAsync(50);
    expect(errors).toHaveLength(1);
    loop.wake();
    await vi.advanceTimersByTimeAsync(1);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(5);
    expect(stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(10);
    await stopping;
    loop.wake();
    await vi.advanceTimersByTimeAsync(100);
    expect(starts).toHaveLength(2);
    expect(errors).toHaveLength(2);
  });
});

describe('Waiters', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());
  const job = (id: number) => ({ id, status: 'SUCCEEDED' }) as JobRow;

  it('two waiters of one job both get it from one settle, and leave; the ids are listed once', async () => {
    let changes = 0;
    const waiters = new Waiters(() => (changes += 1));
    const [a, b, other] = [waiters.add(7, {}), waiters.add(7, {}), waiters.add(8, {})];
    expect(waiters.ids()).toEqual([7, 8]);
    waiters.settle([job(7)]);
    await expect(a.promise).resolves.toEqual(job(7));
    await expect(b.promise).resolves.toEqual(job(7));
    expect(waiters.ids()).toEqual([8]);
    other.fail(new Error('gone'));
    await expect(other.promise).rejects.toThrow('gone');
    expect(waiters.size).toBe(0);
    expect(changes).toBe(6);
  });

  it('a timeout rejects with WaitTimeoutError; an abort with its reason; failAll ends the rest; each settles once', async () => {
    const waiters = new Waiters(() => undefined);
    const timed = waiters.add(1, { timeoutMs: 100 });
    const controller = new AbortController();
    const aborted = waiters.add(2, { signal: controller.signal });
    const rest = waiters.add(3, { timeoutMs: 10_000 });
    await vi.advanceTimersByTimeAsync(100);
    await expect(timed.promise).rejects.toEqual(new WaitTimeoutError(1, 100));
    controller.abort('stop');
    await expect(aborted.promise).rejects.toBe('stop');
    waiters.failAll(new Error('closed'));
    rest.resolve(job(3));
    await expect(rest.promise).rejects.toThrow('closed');
    expect(waiters.size).toBe(0);
    const late = waiters.add(4, { signal: AbortSignal.abort('already') });
    await expect(late.promise).rejects.toBe('already');
  });
});

describe('one read feeds every iterator', () => {
  /** A store whose terminal events are `rows`, read as the drivers do: after a position, in order, `limit` at most. */
  function fakeStore(rows: OutcomeEventRow[]) {
    const reads: OutcomePosition[] = [];
    const outcomeEventsAfter = async ({ after, limit }: { after: OutcomePosition; limit: number }) => {
      reads.push(after);
      return rows.filter((r) => isAfter({ txid: r.txid, id: r.id }, after)).slice(0, limit);
    };
    return { reads, store: { outcomeEventsAfter } };
  }
  const stream = (classes?: string[]) =>
    new OutcomeStream(
      classes,
      () => undefined,
      () => undefined,
    );
  const ids = (outcomes: Outcome[]) => outcomes.map((o) => o.id);
  const drain = async (s: OutcomeStream, count: number) => {
    const got: Outcome[] = [];
    for (let i = 0; i < count; i++) got.push((await s.next()).value as Outcome);
    return got;
  };

  it('reads from the earliest position; each takes what is past its own, of its classes; cancel requests are none', async () => {
    const rows = [
      row(1),
      row(2, { class: 'sms' }),
      row(3, { event: 'CANCELLED', detail: '{"stage":"requested"}' }),
      row(4, { event: 'FAILED', detail: '{"code":"E:1"}' }),
    ];
    const { reads, store } = fakeStore(rows);
    const [all, emails, late] = [stream(), stream(['email']), stream()];
    all.start(OUTCOMES_START);
    emails.start(OUTCOMES_START);
    late.start({ txid: '0', id: 2 });
    expect(await feedStreams([all, emails, late], store)).toBe(false);
    expect(reads).toEqual([OUTCOMES_START]);
    expect(ids(await drain(all, 3))).toEqual([101, 102, 104]);
    expect(ids(await drain(emails, 2))).toEqual([101, 104]);
    const [failed] = await drain(late, 1);
    expect(failed).toEqual({
      id: 104,
      class: 'email',
      status: 'FAILED',
      error_code: 'E:1',
      finished_at: 1_004,
      cursor: '0.4',
    });
    // the sms row and the cancel request moved the email stream on: the next read starts after row 4 for all
    await feedStreams([all, emails, late], store);
    expect(reads.at(-1)).toEqual({ txid: '0', id: 4 });
  });

  it('a full page asks for more at once; a stream with a full buffer is not read for until it drains', async () => {
    const rows = Array.from({ length: OUTCOME_PAGE + 5 }, (_, i) => row(i + 1));
    const { reads, store } = fakeStore(rows);
    let wakes = 0;
    const s = new OutcomeStream(
      undefined,
      () => (wakes += 1),
      () => undefined,
    );
    s.start(OUTCOMES_START);
    expect(await feedStreams([s], store)).toBe(true);
    expect(await feedStreams([s], store)).toBe(false);
    expect(reads).toHaveLength(1);
    wakes = 0;
    await s.next();
    expect(wakes).toBe(1);
    expect(await feedStreams([s], store)).toBe(false);
    expect(ids(await drain(s, OUTCOME_PAGE + 4)).at(-1)).toBe(100 + OUTCOME_PAGE + 5);
  });
});
