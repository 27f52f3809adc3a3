/**
 * The child's group commit on a real SQLite store: an outcome queued while a
 * write is in flight is written by the next one, a drain waits for the
 * write in flight, a claim carries the queued
 * outcomes, a refused write is kept and tried again, an outcome is written
 * within the flush interval without any claim to carry it, and a forgotten
 * job (lease lost) is never written.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FLUSH_AFTER_MS, GroupCommit, type PendingOutcome } from '../../child/group-commit.js';
import { systemClock } from '../../src/clock.js';
import { Queue } from '../../src/queue/queue.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { ClaimedJob, SettleResult, WorkerStore } from '../../src/store/types.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const newDir = tempDir('leasehold-writer-');
const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

/** A real store whose next settle waits for `release()` (a write in flight), or fails once (`failNext`). */
async function gatedStore(): Promise<{
  store: WorkerStore;
  sqlite: SqliteStore;
  hold(): void;
  release(): void;
  failNext(): void;
}> {
  const sqlite = await SqliteStore.open({ path: dbPathIn(newDir()), clock: systemClock });
  stores.push(sqlite);
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  let fail = false;
  const store = Object.create(sqlite) as WorkerStore;
  store.jobsSettle = async (params) => {
    if (fail) {
      fail = false;
      throw new Error('database is locked');
    }
    await gate;
    return sqlite.jobsSettle(params);
  };
  return {
    store,
    sqlite,
    hold: () => (gate = new Promise((resolve) => (open = resolve))),
    release: () => {
      gate = undefined;
      open?.();
    },
    failNext: () => (fail = true),
  };
}

async function claimed(sqlite: SqliteStore, count: number): Promise<ClaimedJob[]> {
  await new Queue(sqlite).enqueueMany(Array.from({ length: count }, (_, i) => ({ class: 'c', payload: { i } })));
  return claimJobs(sqlite, { classes: ['c'], ownerId: 'w', limit: count, leaseMs: 60_000 });
}

function done(job: ClaimedJob): PendingOutcome {
  return { job, run: { verdict: { type: 'complete', result: null }, startedAt: Date.now() }, durationMs: 0 };
}

function writerOn(store: WorkerStore, written: number[]): GroupCommit {
  const onWritten = (batch: { outcome: PendingOutcome; result: SettleResult }[]) =>
    written.push(...batch.map((w) => w.outcome.job.id));
  return new GroupCommit({ store, log: () => undefined, retryMs: 20, onWritten });
}

describe('GroupCommit', () => {
  it('writes an outcome queued while a write is in flight, with the next write', async () => {
    const { store, sqlite, hold, release } = await gatedStore();
    const [a, b] = await claimed(sqlite, 2);
    const written: number[] = [];
    const writer = writerOn(store, written);
    writer.add(done(a!));
    hold();
    const first = writer.flush();
    writer.add(done(b!));
    release();
    await first;
    await waitFor('both outcomes written', () => written.length === 2, { timeoutMs: 5_000 });
    expect(written).toEqual([a!.id, b!.id]);
    expect((await sqlite.jobGet({ id: b!.id }))?.status).toBe('SUCCEEDED');
    writer.close();
  });

  it('drain waits for a write in flight (its batch is out of the queue) before it resolves', async () => {
    const { store, sqlite, hold, release } = await gatedStore();
    const [a] = await claimed(sqlite, 1);
    const written: number[] = [];
    const writer = writerOn(store, written);
    writer.add(done(a!));
    hold();
    void writer.flush();
    await new Promise((resolve) => setImmediate(resolve)); // the write has begun: its batch is out of the queue
    let drained = false;
    const draining = writer.drain().then(() => (drained = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(drained).toBe(false);
    release();
    await draining;
    expect(written).toEqual([a!.id]);
    writer.close();
  });

  it('writes within the flush interval with no claim to carry it, and keeps a refused write for the next try', async () => {
    const { store, sqlite, failNext } = await gatedStore();
    const [a] = await claimed(sqlite, 1);
    const written: number[] = [];
    const writer = writerOn(store, written);
    failNext();
    writer.add(done(a!));
    await waitFor('the outcome written after one refusal', () => written.length === 1, {
      timeoutMs: 10 * FLUSH_AFTER_MS + 2_000,
    });
    expect((await sqlite.jobGet({ id: a!.id }))?.status).toBe('SUCCEEDED');
    writer.close();
  });

  it('writes the queued outcomes with a claim, and resolves to the jobs claimed', async () => {
    const { store, sqlite } = await gatedStore();
    const [a] = await claimed(sqlite, 1);
    await new Queue(sqlite).enqueueMany([{ class: 'c', payload: { next: true } }]);
    const written: number[] = [];
    const writer = writerOn(store, written);
    writer.add(done(a!));
    const next = await writer.flushAndClaim({
      classes: ['c'],
      ownerId: 'w',
      limit: 5,
      leaseMs: 60_000,
      classMaxRetries: 3,
    });
    expect(written).toEqual([a!.id]);
    expect(next.map((job) => JSON.parse(job.payload) as unknown)).toEqual([{ next: true }]);
    expect(
      await writer.flushAndClaim({ classes: ['c'], ownerId: 'w', limit: 5, leaseMs: 60_000, classMaxRetries: 3 }),
    ).toEqual([]);
    writer.close();
  });

  it('never writes about a job it was told to forget', async () => {
    const { store, sqlite } = await gatedStore();
    const [a, b] = await claimed(sqlite, 2);
    const written: number[] = [];
    const writer = writerOn(store, written);
    writer.add(done(a!));
    writer.add(done(b!));
    writer.forget(a!.id);
    await writer.drain();
    expect(written).toEqual([b!.id]);
    expect((await sqlite.jobGet({ id: a!.id }))?.status).toBe('CLAIMED');
    writer.close();
  });
  it('sends each settlement its claim record, not the claimed job (the payload stays in the child)', async () => {
    const { store, sqlite } = await gatedStore();
    const [job] = await claimed(sqlite, 1);
    const sent: Parameters<WorkerStore['jobsSettle']>[0][] = [];
    const settle = store.jobsSettle;
    store.jobsSettle = async (params) => {
      sent.push(params);
      return settle(params);
    };
    const writer = writerOn(store, []);
    writer.add(done(job!));
    await writer.drain();
    expect(sent[0]!.settlements[0]!.claim).toEqual({
      attempt: job!.attempt,
      ownerId: job!.ownerId,
      claimedAt: job!.claimedAt,
    });
  });
});
