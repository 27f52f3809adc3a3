/**
 * UnservedLog's rules with a fake store and fake timers: CLASS_UNSERVED once
 * for a class with due jobs and no live child on any host, again only after
 * it was served in between; and what each check reads. Every host runs the
 * check every two seconds, so a host whose own children serve every due
 * class asks the database for the due classes alone. The log on a real
 * supervisor: test/supervisor/queue-age.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WorkerRow } from '../../src/store/types.js';
import { UnservedLog } from '../../supervisor/unserved-log.js';
import { memoryLogger } from './support/memory-logger.js';

const TICK_MS = 2_000;

function setup(servedHere: string[]) {
  const { logger, records } = memoryLogger();
  const due = new Set<string>();
  const liveElsewhere = new Set<string>();
  const reads: string[] = [];
  const store = {
    clock: { now: () => Date.now() },
    statsOldestDue: async () => {
      reads.push('due');
      return [...due].map((name) => ({ class: name, run_at: Date.now() - 5_000 }));
    },
    workerList: async () => {
      reads.push('workers');
      const supervisor = { id: 'other', kind: 'supervisor', exited_at: null, heartbeat_at: Date.now() };
      const children = [...liveElsewhere].map((name) => ({
        id: `other/${name}`,
        kind: 'child',
        class: name,
        supervisor_id: 'other',
        exited_at: null,
      }));
      return [supervisor, ...children] as unknown as WorkerRow[];
    },
    classControlList: async () => {
      reads.push('controls');
      return [];
    },
  };
  const log = new UnservedLog({ store, logger, intervalMs: TICK_MS, servedHere: () => new Set(servedHere) });
  const unservedLines = () => records.filter((record) => record.event === 'CLASS_UNSERVED');
  return { log, due, liveElsewhere, reads, unservedLines };
}

describe('UnservedLog', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('reads only the due classes while this host serves every one of them', async () => {
    const { log, due, reads, unservedLines } = setup(['email']);
    due.add('email');
    log.start();
    await vi.advanceTimersByTimeAsync(3 * TICK_MS);
    await log.stop();
    expect(reads).toEqual(['due', 'due', 'due']);
    expect(unservedLines()).toEqual([]);
  });

  it('logs a class no host serves once, and again only after it was served in between', async () => {
    const { log, due, liveElsewhere, reads, unservedLines } = setup(['email']);
    due.add('emial');
    log.start();
    await vi.advanceTimersByTimeAsync(3 * TICK_MS);
    expect(unservedLines()).toHaveLength(1);
    expect(unservedLines()[0]).toMatchObject({ level: 'warn', class: 'emial', oldest_age_seconds: 5 });
    expect(reads.slice(0, 3)).toEqual(['due', 'workers', 'controls']);

    liveElsewhere.add('emial');
    await vi.advanceTimersByTimeAsync(TICK_MS);
    liveElsewhere.delete('emial');
    await vi.advanceTimersByTimeAsync(TICK_MS);
    await log.stop();
    expect(unservedLines()).toHaveLength(2);
  });
});
