/**
 * The clock watch's rule (supervisor/clock-watch.ts), on a store clock the
 * test sets and fake timers: CLOCK_OFFSET at start, then only when the
 * offset crosses the warning line, either way. On real processes:
 * test/supervisor/clock-skew.test.ts and clock-step.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CLOCK_OFFSET_WARN_MS, ClockWatch } from '../../supervisor/clock-watch.js';
import { memoryLogger } from './support/memory-logger.js';

describe('ClockWatch', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('logs at start, when the offset crosses the line, and when it comes back; nothing in between', async () => {
    let storeBehindMs = 0;
    const store = { driver: 'postgres' as const, clock: { now: () => Date.now() - storeBehindMs } };
    const { logger, records } = memoryLogger();
    const watch = new ClockWatch({ store, logger });
    const offsets = () =>
      records
        .filter((record) => record.event === 'CLOCK_OFFSET')
        .map((record) => [record.level, record.offset_ms, record.warn_ms]);

    watch.start();
    expect(offsets()).toEqual([['info', 0, CLOCK_OFFSET_WARN_MS]]);
    storeBehindMs = 20_000;
    await vi.advanceTimersByTimeAsync(5_000);
    await vi.advanceTimersByTimeAsync(5_000);
    storeBehindMs = CLOCK_OFFSET_WARN_MS;
    await vi.advanceTimersByTimeAsync(5_000);
    storeBehindMs = -20_000;
    await vi.advanceTimersByTimeAsync(5_000);
    await watch.stop();

    expect(offsets()).toEqual([
      ['info', 0, CLOCK_OFFSET_WARN_MS],
      ['warn', 20_000, CLOCK_OFFSET_WARN_MS],
      ['info', CLOCK_OFFSET_WARN_MS, CLOCK_OFFSET_WARN_MS],
      ['warn', -20_000, CLOCK_OFFSET_WARN_MS],
    ]);
  });

  it('moves a SQLite file towards the wall clock once a minute', async () => {
    const clockFollowWall = vi.fn(async () => undefined);
    const store = { driver: 'sqlite' as const, clock: { now: () => Date.now() }, clockFollowWall };
    const watch = new ClockWatch({ store, logger: memoryLogger().logger });
    watch.start();
    await vi.advanceTimersByTimeAsync(59_000);
    expect(clockFollowWall).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(clockFollowWall).toHaveBeenCalledTimes(1);
    await watch.stop();
  });
});
