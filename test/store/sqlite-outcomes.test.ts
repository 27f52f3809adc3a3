/**
 * SQLite's wake-ups for readers of outcomes: the watch on the WAL file wakes
 * once, then waits to be armed again (a busy file writes thousands of times
 * a second), and a write made before it is armed again is in what the
 * reader reads next.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Queue } from '../../src/queue/queue.js';
import type { WakeWatch } from '../../src/store/wake-watch.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { TestClock } from '../helpers/clock.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';
import { holdsFor, waitFor } from '../helpers/wait.js';

const newDir = tempDir('leasehold-sqlite-outcomes-');

describe('SQLite outcomes watch', () => {
  let store: SqliteStore;
  let queue: Queue;
  let watch: WakeWatch | undefined;

  beforeEach(async () => {
    const clock = new TestClock();
    store = await SqliteStore.open({ path: dbPathIn(newDir()), clock });
    queue = new Queue(store, { clock, unknownClass: 'ignore' });
  });
  afterEach(async () => {
    await watch?.stop();
    await queue.close();
  });

  it('wakes at the first commit, then not until it is armed again', async () => {
    let woken = 0;
    watch = await store.outcomesSubscribe(
      () => (woken += 1),
      (error) => {
        throw error;
      },
    );
    await queue.enqueue({ class: 'email' });
    await waitFor('a wake-up', () => woken === 1);
    await queue.enqueue({ class: 'email' });
    await holdsFor('no second wake-up before the watch is armed again', () => woken === 1, { forMs: 200 });
    watch.rearm();
    watch.rearm();
    await queue.enqueue({ class: 'email' });
    await waitFor('a wake-up after the rearm', () => woken === 2);
    await watch.stop();
    watch.rearm();
    await queue.enqueue({ class: 'email' });
    await holdsFor('no wake-up once stopped', () => woken === 2, { forMs: 200 });
    expect(await store.jobList({ limit: 10 })).toHaveLength(4);
  });
});
