/**
 * JobRun's rules, driven directly (fake store, fake timers, no process): a
 * fast job's start rides with its outcome, a slow one's is written alone; a
 * cancel, a timeout and a shutdown each end the run with their own verdict;
 * a lost lease ends it with nothing to write.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CostMeter } from '../../child/attempt-meter.js';
import type { Handler, HandlerContext } from '../../src/handler.js';
import { ABORT, JobRun, START_WRITE_DELAY_MS } from '../../child/job-run.js';
import type { ClaimedJob } from '../../src/store/types.js';
import { classConfig } from './support/class-config.js';
import { FakeWorkerStore } from './support/fake-worker-store.js';
import { Deadlines } from '../../child/deadlines.js';

const config = classConfig({ max_runtime_seconds: 10, backoff: { base_seconds: 1, max_seconds: 1, jitter: false } });

/** A handler that waits for its signal and fails with its reason, as a well-behaved one does. */
const untilAborted: Handler = (_job, ctx) =>
  new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted by signal'))));

function setup(handler: Handler) {
  const store = new FakeWorkerStore();
  const job: ClaimedJob = {
    id: 1,
    class: 'unit',
    payload: '{"n":1}',
    priority: 0,
    attempt: 1,
    maxRetries: 3,
    leaseToken: 'token',
    traceparent: null,
    leaseExpiresAt: Date.now() + 30_000,
    createdAt: Date.now(),
    ownerId: 'worker',
    claimedAt: Date.now(),
  };
  const logged: string[] = [];
  const run = new JobRun(
    {
      store,
      config,
      handler,
      resources: undefined,
      resultLimitBytes: 1_000,
      log: (_level, msg) => logged.push(msg),
      heartbeat: async () => undefined,
      costs: new CostMeter(),
      deadlines: new Deadlines(),
    },
    job,
  );
  return { store, run, job, logged };
}

describe('JobRun', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('stamps a fast job’s start on its outcome, and writes a slow job’s start on its own', async () => {
    const fast = setup(() => ({ ok: true }));
    const fastVerdict = await fast.run.run();
    expect(fastVerdict?.verdict).toEqual({ type: 'complete', result: '{"ok":true}' });
    expect(fastVerdict?.startedAt).toBe(fast.run.startedAt);
    expect(fast.store.starts).toEqual([]);

    const slow = setup(() => new Promise((resolve) => setTimeout(resolve, START_WRITE_DELAY_MS * 2)));
    const ended = slow.run.run();
    await vi.advanceTimersByTimeAsync(START_WRITE_DELAY_MS * 2);
    const slowVerdict = await ended;
    expect(slow.store.starts).toEqual([slow.job.id]);
    expect(slowVerdict?.startedAt).toBeNull();
  });

  it('fails a result over the size limit, not retryable', async () => {
    const { run } = setup(() => 'x'.repeat(2_000));
    const verdict = await run.run();
    expect(verdict?.verdict).toMatchObject({
      type: 'fail',
      error: { code: 'INVALID_INPUT:RESULT_TOO_LARGE', retryable: false },
    });
  });

  it('ends a job cancelled while it runs as cancelled, not retryable, with what the handler said', async () => {
    const { run } = setup(untilAborted);
    const ended = run.run();
    run.abort(ABORT.cancelled());
    const verdict = await ended;
    expect(verdict?.verdict).toMatchObject({
      type: 'fail',
      error: { code: 'CANCELLED:BY_OPERATOR', retryable: false },
    });
    expect(verdict?.verdict.type === 'fail' && verdict.verdict.error.detail).toContain('(handler: aborted by signal)');
  });

  it('aborts at max_runtime_seconds and fails the attempt with a retry', async () => {
    const { run } = setup(untilAborted);
    const ended = run.run();
    await vi.advanceTimersByTimeAsync(config.max_runtime_seconds * 1000 - 1);
    let settled = false;
    void ended.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect((await ended)?.verdict).toEqual({
      type: 'fail',
      error: expect.objectContaining({ code: 'TIMEOUT:MAX_RUNTIME', retryable: true }),
      retryDelayMs: 1_000,
    });
  });

  it('has nothing to write about a job whose lease was lost mid-run, and its heartbeat says so', async () => {
    let ctx: HandlerContext | undefined;
    const { run, logged } = setup((_job, context) => {
      ctx = context;
      return untilAborted(_job, context);
    });
    const ended = run.run();
    run.leaseLost();
    expect(ctx?.signal.aborted).toBe(true);
    expect((ctx?.signal.reason as { code?: string }).code).toBe('LEASE:LOST');
    await expect(ctx!.heartbeat()).rejects.toMatchObject({ code: 'LEASE:LOST' });
    expect(await ended).toBeNull();
    expect(await run.verdictNow()).toBeNull();
    expect(logged.filter((line) => line.startsWith('lease lost'))).toHaveLength(1);
  });

  it('loses the lease when the start write is turned away', async () => {
    const { run, store, job } = setup(untilAborted);
    store.lost.add(job.id);
    const ended = run.run();
    await vi.advanceTimersByTimeAsync(START_WRITE_DELAY_MS);
    expect(await ended).toBeNull();
  });

  it('gives back a job stopped by a shutdown without spending a retry', async () => {
    const { run } = setup(untilAborted);
    const ended = run.run();
    run.abort(ABORT.shutdown('supervisor stopping'));
    expect((await ended)?.verdict).toEqual({ type: 'release', reason: 'shutdown' });
    expect((await run.verdictNow())?.verdict.type).toBe('release');
  });
});
