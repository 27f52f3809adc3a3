/**
 * SQLite's wake-ups: a watch on the database's folder that sees a commit
 * from another process as a write to the WAL file. A watch wakes once and
 * waits for rearm(), so that a busy worker is not woken by every commit.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const newDir = tempDir('leasehold-wake-');

describe('SQLite wake-ups', () => {
  it('SQLite wakes its subscribers on a commit from another process (a watch on its WAL file), once until rearmed', async () => {
    const dir = newDir();
    const store = await SqliteStore.open({ path: join(dir, 'queue.db'), clock: systemClock });
    try {
      let woken = 0;
      const watch = await store.subscribe(['email'], () => (woken += 1));
      const enqueue = async () => {
        const script = `const { openQueue } = await import(process.cwd() + '/dist/src/index.js');
          const queue = await openQueue({ database: process.argv[1] }); await queue.enqueue({ class: 'email' }); await queue.close();`;
        await execa(process.execPath, ['--input-type=module', '-e', script, join(dir, 'queue.db')]);
      };
      await enqueue();
      await waitFor('the enqueue in another process wakes the subscriber', () => woken > 0);
      expect(woken).toBe(1);
      // A subscriber armed anew wakes on each next commit; by then one not rearmed (or stopped) would have woken too.
      let witnessed = 0;
      const witness = await store.subscribe(['email'], () => (witnessed += 1));
      await enqueue();
      await waitFor('the commit wakes the subscriber armed anew', () => witnessed > 0);
      expect(woken).toBe(1);
      watch.rearm();
      witness.rearm();
      await enqueue();
      await waitFor('the commit wakes the rearmed subscriber', () => woken > 1);
      await watch.stop();
      watch.rearm();
      const settled = woken;
      witness.rearm();
      witnessed = 0;
      await enqueue();
      await waitFor('the commit wakes the subscriber still watching', () => witnessed > 0);
      expect(woken).toBe(settled);
      await witness.stop();
    } finally {
      await store.close();
    }
  });
});
