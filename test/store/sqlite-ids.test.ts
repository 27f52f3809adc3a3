/**
 * SQLite never gives an id twice, for jobs and for their events: a prune
 * that deletes the newest rows of all must not let the next enqueue take
 * their ids, or an events() cursor that stood past them would skip the new
 * outcomes, and a job id kept by an application would name another job.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Queue } from '../../src/queue/queue.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { TestClock } from '../helpers/clock.js';
import { claimJobs, completeIfHeld } from '../helpers/fenced-writes.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';

const newDir = tempDir('leasehold-ids-');

describe('SQLite ids after a prune of the newest rows', () => {
  const clock = new TestClock();
  let store: SqliteStore;
  let queue: Queue;

  beforeEach(async () => {
    store = await SqliteStore.open({ path: dbPathIn(newDir()), clock });
    queue = new Queue(store, { clock, unknownClass: 'ignore' });
  });
  afterEach(async () => {
    await store.close();
  });

  const lastEventId = () => store.connection.prepare('SELECT max(id) FROM job_events').pluck().get() as number;

  it('gives the next job and its events ids past every deleted one', async () => {
    await queue.enqueueMany([{ class: 'email' }, { class: 'email' }, { class: 'email' }]);
    for (const job of await claimJobs(store, { classes: ['email'], ownerId: 'w', limit: 3, leaseMs: 60_000 }))
      await completeIfHeld(store, { id: job.id, leaseToken: job.leaseToken, result: null });
    const eventsBefore = lastEventId();
    clock.advance(1_000);
    expect(await store.jobsPruneBatch({ status: 'SUCCEEDED', finishedBefore: clock.now(), limit: 10 })).toBe(3);

    const next = await queue.enqueue({ class: 'email' });
    expect(next.id).toBe(4);
    expect(lastEventId()).toBeGreaterThan(eventsBefore);
    // A bulk batch's ids are given before its rows are written: past every deleted one too.
    expect((await queue.enqueueMany([{ class: 'email' }, { class: 'email' }])).map((job) => job.id)).toEqual([5, 6]);
  });

  it('gives a batch of 150,000 plain jobs 150,000 ids in order, each naming its own job', async () => {
    const count = 150_000;
    const inserted = await queue.enqueueMany(Array.from({ length: count }, (_, n) => ({ class: 'bulk', payload: n })));
    expect(inserted).toHaveLength(count);
    expect(inserted.every((job, n) => job.created && job.id === inserted[0]!.id + n)).toBe(true);
    const last = store.connection.prepare('SELECT payload FROM jobs WHERE id = ?').pluck().get(inserted.at(-1)!.id);
    expect(last).toBe(String(count - 1));
  });
});
