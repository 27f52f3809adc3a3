/**
 * The time of a SQLite file (src/store/sqlite/file-clock.ts): every process
 * on the file shares one timeline on the monotonic clock, which a step of
 * the wall clock does not move and the supervisor's steps bring back to it
 * gradually. The step is faked here (Date.now); the step on real processes:
 * test/supervisor/clock-step.test.ts.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { FOLLOW_STEP_MS } from '../../src/store/sqlite/file-clock.js';
import { tempDir } from '../helpers/temp.js';

const newDir = tempDir('leasehold-file-clock-');
const STEP_MS = 30_000;

async function openOn(file: string): Promise<SqliteStore> {
  return SqliteStore.open({ path: file });
}

describe("a SQLite file's time", () => {
  afterEach(() => vi.restoreAllMocks());

  it('is one timeline for every store on the file, which a step of the wall clock does not move', async () => {
    const file = path.join(newDir(), 'queue.db');
    const first = await openOn(file);
    const wall = Date.now;
    vi.spyOn(Date, 'now').mockImplementation(() => wall() + STEP_MS);
    const second = await openOn(file);
    try {
      for (const store of [first, second]) {
        const offset = Date.now() - store.clock.now();
        // The step, give or take the time between the readings (the anchor rounds to the ms).
        expect(Math.abs(offset - STEP_MS)).toBeLessThan(1_000);
      }
      expect(Math.abs(first.clock.now() - second.clock.now())).toBeLessThan(1_000);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('follows the wall clock after a step a bounded step at a time', async () => {
    const file = path.join(newDir(), 'queue.db');
    const store = await openOn(file);
    const wall = Date.now;
    vi.spyOn(Date, 'now').mockImplementation(() => wall() + STEP_MS);
    try {
      const before = Date.now() - store.clock.now();
      await store.clockFollowWall();
      const after = Date.now() - store.clock.now();
      // Ahead by the step: the timeline moved towards the wall clock by one step, no more. (Back, it stands still.)
      expect(before).toBeGreaterThan(STEP_MS - 1_000);
      expect(before - after).toBeGreaterThan(FOLLOW_STEP_MS - 100);
      expect(before - after).toBeLessThan(FOLLOW_STEP_MS + 100);
      // Another store opened on the file now takes the moved timeline.
      const other = await openOn(file);
      expect(Math.abs(other.clock.now() - (Date.now() - after))).toBeLessThan(1_000);
      await other.close();
    } finally {
      await store.close();
    }
  });

  it('is anchored again on the wall clock in a new boot', async () => {
    const file = path.join(newDir(), 'queue.db');
    (await openOn(file)).close();
    const db = new Database(file);
    db.prepare(`UPDATE clock_anchor SET boot_id = 'an earlier boot', wall_ms = wall_ms - 3600000`).run();
    db.close();
    const store = await openOn(file);
    try {
      expect(Math.abs(Date.now() - store.clock.now())).toBeLessThan(1_000);
    } finally {
      await store.close();
    }
  });
});
