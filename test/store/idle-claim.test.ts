/**
 * An idle worker's claim on SQLite: woken by every commit, it must not take
 * the write lock from those who have work to write only to find nothing. It
 * looks first (a read, which WAL lets through a held write lock), and takes
 * the lock only when a job is due. Proven against another process that
 * holds the write lock: a claim that tried to write could not return.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Queue } from '../../src/queue/queue.js';
import { systemClock } from '../../src/clock.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { holdExclusiveLock, type LockHolder } from '../helpers/faults.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { useProcessGuard } from '../helpers/processes.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';

useProcessGuard();
const newDir = tempDir('leasehold-idle-claim-');
const holders: LockHolder[] = [];
afterEach(async () => {
  for (const holder of holders.splice(0)) await holder.release();
});

const claim = { classes: ['email'], ownerId: 'idle-worker', limit: 8, leaseMs: 30_000 };

describe('an idle claim looks before it takes the write lock', () => {
  it('with nothing due (an empty queue, a job scheduled later, a paused class) it returns empty-handed while another process holds the lock', async () => {
    const path = dbPathIn(newDir());
    const store = await SqliteStore.open({ path, clock: systemClock });
    const queue = new Queue(store, { actor: 'test' });
    await queue.enqueue({ class: 'email', payload: {}, delay: 3_600_000 });
    await queue.enqueue({ class: 'paused', payload: {} });
    await store.classPause({ class: 'paused', actor: 'test' });

    const holder = await holdExclusiveLock(path);
    holders.push(holder);
    expect(await claimJobs(store, claim)).toEqual([]);
    expect(await claimJobs(store, { ...claim, classes: ['paused'] })).toEqual([]);
    expect(await claimJobs(store, { ...claim, classes: ['email', 'paused'] })).toEqual([]);

    // once a job is due, the claim writes: after the lock is let go
    await holder.release();
    const { id } = await queue.enqueue({ class: 'email', payload: {} });
    expect((await claimJobs(store, claim)).map((job) => job.id)).toEqual([id]);
    await store.close();
  });
});
