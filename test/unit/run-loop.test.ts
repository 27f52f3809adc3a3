/**
 * RunLoop's rules, driven directly: a fake store (test/unit/support), a
 * handler that does what each case needs, fake timers, no process and no
 * database. Covered: the prefetch grows while jobs are fast and collapses
 * after a slow one; a prefetched job that cannot start in time is handed
 * back unstarted; a cancel reaches a waiting job (it never runs) and a
 * running one (its signal); a lost lease stops a running job and drops a
 * waiting one, and nothing more is written about either; successes are
 * told in tallies, the last before a drain ends.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FLUSH_AFTER_MS } from '../../child/group-commit.js';
import type { Handler, HandlerContext, HandlerJob } from '../../src/handler.js';
import { RunLoop } from '../../child/run-loop.js';
import { STARTS_REPORT_MS } from '../../child/supervisor-report.js';
import { SUCCESS_REPORT_MS } from '../../child/success-report.js';
import type { LoopRecord } from '../../src/ipc/flight-record.js';
import type { ChildToSupervisor, FinishedJob } from '../../src/ipc/protocol.js';
import { classConfig } from './support/class-config.js';
import { FakeWorkerStore } from './support/fake-worker-store.js';
import { until } from './support/until.js';

const HEARTBEAT_MS = 10;

interface Task {
  /** How long the handler runs, in (fake) ms; 0: it returns at once. */
  ms?: number;
  /** Run until the signal aborts (or `ms`, if given, passes). */
  untilAborted?: boolean;
}

/** A handler that does what each job's payload (a Task) says, and remembers what it ran and the signals it saw. */
function taskHandler() {
  const ran: number[] = [];
  const signals = new Map<number, AbortSignal>();
  const handler: Handler = (job: HandlerJob, ctx: HandlerContext) => {
    ran.push(job.id);
    const task = job.payload as Task;
    if (!task.untilAborted && !task.ms) return undefined;
    signals.set(job.id, ctx.signal);
    return new Promise<void>((resolve, reject) => {
      if (task.ms) setTimeout(resolve, task.ms);
      ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
    });
  };
  return { handler, ran, signals };
}

function setup(fields: Record<string, unknown> = {}) {
  const store = new FakeWorkerStore();
  const { handler, ran, signals } = taskHandler();
  const sent: ChildToSupervisor[] = [];
  const config = classConfig({
    concurrency: 1,
    claim_batch: 8,
    poll_seconds: 0.2,
    lease_seconds: 3,
    heartbeat_seconds: HEARTBEAT_MS / 1000,
    ...fields,
  });
  // The flight recorder's writes, in order: a start names its job, an idle slot is null.
  const recorded: { slot: number; jobId: number | null }[] = [];
  const loopRecords: LoopRecord[] = [];
  const recorder = {
    loop: (state: LoopRecord) => void loopRecords.push(state),
    started: (slot: number, job: { jobId: number }) => void recorded.push({ slot, jobId: job.jobId }),
    idle: (slot: number) => void recorded.push({ slot, jobId: null }),
  };
  const loop = new RunLoop({
    store,
    config,
    handler,
    resources: undefined,
    resultLimitBytes: 1_000,
    log: () => undefined,
    ownerId: 'worker',
    send: (message) => sent.push(message),
    recorder,
    successLines: true,
  });
  // Successes come in tallies, each job in full since successLines is on.
  const finished = (): FinishedJob[] =>
    sent.flatMap((message) =>
      message.type === 'jobs-finished'
        ? message.jobs
        : message.type === 'jobs-succeeded'
          ? (message.tally.jobs ?? [])
          : [],
    );
  const startedIds = (): number[] => recorded.flatMap((write) => (write.jobId === null ? [] : [write.jobId]));
  return { store, loop, ran, signals, finished, startedIds, recorded, loopRecords, sent };
}

async function stopped(loop: RunLoop): Promise<void> {
  let done = false;
  void loop.stop('test over', 10).then(() => (done = true));
  await until('the loop stopped', () => done);
}

/**
 * Start the loop on three fast jobs, a 100 ms blocker and four more: with
 * claims of 1, 2 and 4 (the prefetch grown by the fast ones), the blocker
 * comes with three jobs that must wait behind it.
 */
async function blockerAhead({ store, loop, ran }: ReturnType<typeof setup>) {
  const [f1, f2, f3, blocker, ...waiting] = store.enqueue({}, {}, {}, { ms: 100 }, {}, {}, {}, {}) as [
    number,
    number,
    number,
    number,
    ...number[],
  ];
  loop.start();
  await until('the blocker runs', () => ran.includes(blocker));
  return { fast: [f1, f2, f3], blocker, waiting };
}

/** The claim sizes asked for, in order. */
const limits = (store: FakeWorkerStore) => store.claims.map((claim) => claim.limit);

describe('RunLoop', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('arms the wake-up watch only once a claim found nothing, then claims again before it waits: a busy child watches no commit', async () => {
    const { store, loop } = setup();
    const ids = store.enqueue(...Array.from({ length: 12 }, () => ({})));
    // What the loop did, in order: each claim as it reached the store, each rearm of the watch.
    const steps: string[] = [];
    const jobsSettle = store.jobsSettle.bind(store);
    store.jobsSettle = (params) => {
      if (params.claim !== undefined) steps.push('claim');
      return jobsSettle(params);
    };
    loop.watchWakes({ rearm: () => void steps.push('rearm') });
    loop.start();
    await until('every job settled', () => store.settled.length === ids.length);
    await until('the claim that found nothing made again, watched', () =>
      steps.join(' ').endsWith('claim rearm claim'),
    );
    // The first claim is watched (nothing found yet); those that follow one that found jobs are not.
    const busy = steps.slice(2, -2);
    expect(steps.slice(0, 2)).toEqual(['rearm', 'claim']);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy.every((step) => step === 'claim')).toBe(true);
    await stopped(loop);
  });

  it('grows the prefetch (0, 1, 3, 7) while claims bring jobs, up to claim_batch, and keeps it past a job of 10 ms', async () => {
    const { store, loop } = setup();
    const fast: Task = {};
    const ids = store.enqueue(
      ...Array.from({ length: 15 }, () => fast),
      { ms: 10 },
      ...Array.from({ length: 10 }, () => fast),
    );
    loop.start();
    await until('every job settled', () => store.settled.length === ids.length);
    // One slot: each claim asks for 1 + the prefetch; the 10 ms job came with the fifth claim, and the jobs behind it
    // still started within FLUSH_AFTER_MS: the prefetch is kept (it used to start over at none).
    expect(limits(store)).toEqual([1, 2, 4, 8, 8, 8, 8]);
    expect([...store.verdicts().values()].every((verdict) => verdict.type === 'complete')).toBe(true);
    await stopped(loop);
  });

  it('hands back prefetched jobs that cannot start within FLUSH_AFTER_MS, unstarted, and claims without a prefetch next', async () => {
    const running = setup();
    const { store, loop, ran, finished, startedIds } = running;
    const { fast, blocker, waiting } = await blockerAhead(running);
    const handedBack = () => waiting.slice(0, 3).every((id) => store.verdicts().get(id)?.type === 'release');
    await vi.advanceTimersByTimeAsync(FLUSH_AFTER_MS - 5);
    expect(handedBack()).toBe(false);
    await until('the waiting jobs handed back', handedBack, 10);
    expect(
      store.settled.filter((settlement) => waiting.includes(settlement.id)).map((settlement) => settlement.startedAt),
    ).toEqual([null, null, null]);
    expect(ran).toEqual([...fast, blocker]);

    // The blocker's outcome is written with the next claim.
    await until('the blocker settled', () => store.verdicts().has(blocker), 200);
    expect(limits(store).slice(0, 4)).toEqual([1, 2, 4, 1]);
    // The supervisor never heard of the handed-back jobs: they never started.
    await until('the last job settled', () => store.verdicts().has(waiting[3]!));
    expect(startedIds()).toEqual([...fast, blocker, waiting[3]]);
    expect(finished().map((job) => job.jobId)).not.toContain(waiting[0]);
    await stopped(loop);
  });

  it('records each start in its own slot before the handler runs, empties a slot nothing starts in, and counts starts in one message a second', async () => {
    const { store, loop, ran, recorded, sent } = setup({ concurrency: 2 });
    const [a, b, c] = store.enqueue({ ms: 20 }, { ms: 40 }, { ms: 5 }) as [number, number, number];
    loop.start();
    await until('every job settled', () => store.settled.length === 3);
    expect(ran).toEqual([a, b, c]);
    // a and b run side by side in slots 0 and 1; c takes the slot a left; each slot is emptied once its last job ends
    expect(recorded.filter((write) => write.jobId !== null)).toEqual([
      { slot: 0, jobId: a },
      { slot: 1, jobId: b },
      { slot: 0, jobId: c },
    ]);
    expect(recorded.slice(-2).sort((x, y) => x.slot - y.slot)).toEqual([
      { slot: 0, jobId: null },
      { slot: 1, jobId: null },
    ]);
    expect(sent.filter((message) => message.type === 'jobs-started')).toEqual([]);
    await vi.advanceTimersByTimeAsync(STARTS_REPORT_MS);
    expect(sent.filter((message) => message.type === 'jobs-started')).toEqual([{ type: 'jobs-started', count: 3 }]);
    await stopped(loop);
  });

  it('records where its loop waits: queued for the writer, claiming, busy, idle; a claim never answered stays claiming', async () => {
    const { store, loop, loopRecords } = setup();
    store.enqueue({ ms: 50 });
    loop.start();
    await until('an empty claim was answered', () => loopRecords.some((record) => record.phase === 'idle'));
    const phases = loopRecords.map((record) => record.phase);
    expect(phases.slice(0, 6)).toEqual(['claim-queued', 'claiming', 'busy', 'claim-queued', 'claiming', 'idle']);
    expect(loopRecords[1]!.lastClaimAt).toBeNull();
    expect(loopRecords.at(-1)!.lastClaimAt).toBe(loopRecords.at(-1)!.since);
    // A database that never answers (a connection dead without an error): the loop waits in its claim, and says since when.
    let answer: (() => void) | undefined;
    store.jobsSettle = () => new Promise((resolve) => (answer = () => resolve({ settled: [], claimed: [] })));
    await until('a claim was sent', () => answer !== undefined);
    const stuck = loopRecords.at(-1)!;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(loopRecords.at(-1)).toBe(stuck);
    expect(stuck.phase).toBe('claiming');
    answer!();
    await stopped(loop);
    expect(loopRecords.at(-1)!.phase).toBe('stopping');
  });

  it('ends a job cancelled while it waits without running it, and tells the supervisor', async () => {
    const running = setup();
    const { store, loop, ran, finished } = running;
    const {
      blocker,
      waiting: [cancelled],
    } = await blockerAhead(running);
    store.cancelRequested.add(cancelled!);
    await until('the cancel written', () => store.verdicts().has(cancelled!), HEARTBEAT_MS + FLUSH_AFTER_MS);
    expect(store.verdicts().get(cancelled!)).toMatchObject({
      type: 'fail',
      error: { code: 'CANCELLED:BY_OPERATOR', retryable: false },
    });
    expect(store.settled.find((settlement) => settlement.id === cancelled)?.startedAt).toBeNull();
    expect(finished().find((job) => job.jobId === cancelled)?.outcome).toBe('CANCELLED');
    await until('the blocker settled', () => store.verdicts().has(blocker), 200);
    expect(ran).not.toContain(cancelled);
    await stopped(loop);
  });

  it('aborts a job cancelled while it runs, and writes it as cancelled', async () => {
    const { store, loop, ran, signals, finished } = setup();
    const [job] = store.enqueue({ untilAborted: true });
    loop.start();
    await until('the job runs', () => ran.includes(job!));
    store.cancelRequested.add(job!);
    await until('the cancel written', () => store.verdicts().has(job!), HEARTBEAT_MS + FLUSH_AFTER_MS);
    expect((signals.get(job!)?.reason as { code?: string }).code).toBe('CANCELLED:BY_OPERATOR');
    expect(store.verdicts().get(job!)).toMatchObject({
      type: 'fail',
      error: { code: 'CANCELLED:BY_OPERATOR', retryable: false },
    });
    expect(finished()).toEqual([expect.objectContaining({ jobId: job, outcome: 'CANCELLED' })]);
    await stopped(loop);
  });

  it('tells the supervisor of the first success at once, of the next ones in one tally a second later, and of any left before a drain ends', async () => {
    const { store, loop, sent } = setup();
    const told = () => sent.flatMap((message) => (message.type === 'jobs-succeeded' ? [message.tally.count] : []));
    const ids = store.enqueue({ ms: 5 }, { ms: 5 }, { ms: 5 });
    loop.start();
    await until('the first success told', () => told().length === 1);
    await until('every job settled', () => store.settled.length === ids.length);
    expect(told()).toEqual([1]);
    let drained = false;
    void loop.drain().then(() => (drained = true));
    await until('the loop drained', () => drained, SUCCESS_REPORT_MS / 2);
    expect(told()).toEqual([1, 2]);
  });

  it('stops a job whose lease is lost mid-run, writes nothing about it, and goes on with the next', async () => {
    const { store, loop, ran, signals, finished } = setup();
    const [lost, next] = store.enqueue({ untilAborted: true }, {});
    loop.start();
    await until('the job runs', () => ran.includes(lost!));
    store.lost.add(lost!);
    await until(
      'the next job settled and told',
      () => store.verdicts().has(next!) && finished().length === 2,
      HEARTBEAT_MS + 100,
    );
    expect((signals.get(lost!)?.reason as { code?: string }).code).toBe('LEASE:LOST');
    expect(store.verdicts().has(lost!)).toBe(false);
    expect(finished()).toEqual([
      expect.objectContaining({ jobId: lost, outcome: 'LEASE_LOST' }),
      expect.objectContaining({ jobId: next, outcome: 'SUCCEEDED' }),
    ]);
    await stopped(loop);
  });

  it('drops a waiting job whose lease is lost: it never runs and nothing is written about it', async () => {
    const running = setup();
    const { store, loop, ran, finished } = running;
    const {
      blocker,
      waiting: [lost],
    } = await blockerAhead(running);
    store.lost.add(lost!);
    await until('the loss reported', () => finished().some((job) => job.jobId === lost), HEARTBEAT_MS + 1);
    expect(finished().find((job) => job.jobId === lost)?.outcome).toBe('LEASE_LOST');
    await until('the blocker settled', () => store.verdicts().has(blocker), 200);
    expect(ran).not.toContain(lost);
    expect(store.verdicts().has(lost!)).toBe(false);
    await stopped(loop);
  });
});
