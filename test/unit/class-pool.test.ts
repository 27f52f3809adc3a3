/**
 * ClassPool's rules with fake children (no process, no database) and fake
 * timers: a crashed child is restarted after a delay that doubles while its
 * slot's children die without finishing a job, and the class is disabled
 * once crashes pass restart.max_restarts within restart.within_seconds; a
 * reload replaces children one at a time, stops at the first replacement
 * that cannot start, and replaces back the ones already replaced.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ClassPool } from '../../supervisor/class-pool.js';
import { RESTART_BASE_DELAY_MS } from '../../supervisor/restart-policy.js';
import { classConfig } from './support/class-config.js';
import { FakeChild } from './support/fake-child.js';
import { FakePoolStore } from './support/fake-pool-store.js';
import { memoryLogger } from './support/memory-logger.js';
import { until } from './support/until.js';

function setup(fields: Record<string, unknown> = {}) {
  const config = classConfig({ processes: 1, restart: { max_restarts: 2, within_seconds: 60 }, ...fields });
  const store = new FakePoolStore();
  const spawned: FakeChild[] = [];
  const { logger, records } = memoryLogger();
  const startChild = (...args: ConstructorParameters<typeof FakeChild>) => {
    const child = new FakeChild(...args);
    spawned.push(child);
    return child;
  };
  const pool = new ClassPool(config, {
    store,
    startChild,
    logger,
    database: 'unit.db',
    statementTimeoutMs: 30_000,
    resultLimitBytes: 1_000,
    supervisorId: 'sup',
    host: 'host',
    retryDelay: () => 1_000,
  });
  const logged = (event: string) => records.filter((record) => record.event === event);
  return { config, store, spawned, pool, logged };
}

/** How many ms of fake time pass until the next child is spawned. */
async function msUntilSpawn(spawned: FakeChild[], limitMs = 60_000): Promise<number> {
  const [before, began] = [spawned.length, Date.now()];
  await until('a child spawned', () => spawned.length > before, limitMs);
  return Date.now() - began;
}

const retire = { graceMs: 100, force: new AbortController().signal };

describe('ClassPool', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('restarts a crashed child with a doubling delay, and disables the class past max_restarts within the window', async () => {
    const { spawned, pool, store, logged } = setup();
    pool.start();
    spawned[0]!.sayReady();
    spawned[0]!.crash();
    expect(await msUntilSpawn(spawned)).toBe(RESTART_BASE_DELAY_MS);
    spawned[1]!.crash();
    expect(await msUntilSpawn(spawned)).toBe(2 * RESTART_BASE_DELAY_MS);
    spawned[2]!.crash();
    await until('the crash loop logged', () => logged('CRASH_LOOP').length === 1);
    expect(pool.disabled).toBe('crash loop: 3 crashes within 60s');
    expect(store.disabled).toBe(pool.disabled);
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(spawned).toHaveLength(3);
    expect(pool.children).toEqual([]);
  });

  it('restarts at the base delay a child that finished a job before it crashed', async () => {
    const { spawned, pool } = setup({ restart: { max_restarts: 10, within_seconds: 60 } });
    pool.start();
    spawned[0]!.crash();
    expect(await msUntilSpawn(spawned)).toBe(RESTART_BASE_DELAY_MS);
    spawned[1]!.sayReady();
    spawned[1]!.runJob(7);
    spawned[1]!.crash();
    expect(await msUntilSpawn(spawned)).toBe(RESTART_BASE_DELAY_MS);
    spawned[2]!.crash();
    expect(await msUntilSpawn(spawned)).toBe(2 * RESTART_BASE_DELAY_MS);
    pool.stopRestarting();
  });

  it('disables the class when a child cannot start, and restarts none', async () => {
    const { spawned, pool, store } = setup();
    pool.start();
    spawned[0]!.failStartup('handler.js has no default export');
    await until('the class disabled', () => store.disabled !== undefined);
    expect(pool.disabled).toBe('handler.js has no default export');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(spawned).toHaveLength(1);
  });

  it('restarts a child whose setup failed as a crash, and disables the class past max_restarts, saying why', async () => {
    const { spawned, pool, store } = setup();
    pool.start();
    spawned[0]!.failStartup('setup failed: no database', true);
    expect(await msUntilSpawn(spawned)).toBe(RESTART_BASE_DELAY_MS);
    spawned[1]!.failStartup('setup failed: no database', true);
    expect(await msUntilSpawn(spawned)).toBe(2 * RESTART_BASE_DELAY_MS);
    spawned[2]!.failStartup('setup failed: still no database', true);
    await until('the class disabled', () => store.disabled !== undefined);
    expect(pool.disabled).toBe(
      'crash loop: 3 crashes within 60s; the last could not start: setup failed: still no database',
    );
  });

  it('stops a reload at the first replacement that cannot start, and replaces back the child already replaced', async () => {
    const { config, spawned, pool, logged } = setup({ processes: 3 });
    pool.start();
    const [first, second, third] = spawned as [FakeChild, FakeChild, FakeChild];
    for (const child of spawned) child.sayReady();
    const next = { ...config, max_runtime_seconds: config.max_runtime_seconds + 1 };
    let failure: string | undefined | null = null;
    void pool.reconfigure(next, 1_000, retire).then((why) => (failure = why));

    await until('slot 0 replaced', () => spawned.length === 4);
    const replacement = spawned[3]!;
    expect(replacement.config).toBe(next);
    // The old child serves until its replacement is ready.
    expect(first.retiring).toBeUndefined();
    replacement.sayReady();
    await until('slot 1 replaced', () => spawned.length === 5);
    expect(first.alive).toBe(false);
    spawned[4]!.failStartup('cannot load the new handler');

    await until('slot 0 replaced back', () => spawned.length === 6);
    const back = spawned[5]!;
    expect(back.config).toBe(config);
    back.sayReady();
    await until('the reload resolved', () => failure !== null);
    expect(failure).toBe('cannot load the new handler');
    expect(pool.config).toBe(config);
    expect(replacement.alive).toBe(false);
    expect(pool.children).toEqual([back, second, third]);
    expect([second.retiring, third.retiring]).toEqual([undefined, undefined]);
    // A replacement that fails is the reload's failure, not the class's: it stays enabled.
    expect(pool.disabled).toBeUndefined();
    expect(logged('CHILD_REPLACED')).toHaveLength(3);
    pool.stopRestarting();
  });

  it('replaces every child, one at a time, when each replacement starts', async () => {
    const { spawned, pool, config } = setup({ processes: 2 });
    pool.start();
    for (const child of spawned) child.sayReady();
    const next = { ...config, lease_seconds: config.lease_seconds * 2 };
    let failure: string | undefined | null = null;
    void pool.reconfigure(next, 1_000, retire).then((why) => (failure = why));
    for (const count of [3, 4]) {
      await until(`replacement ${count - 2} spawned`, () => spawned.length === count);
      expect(spawned.filter((child) => child.alive)).toHaveLength(3);
      spawned[count - 1]!.sayReady();
    }
    await until('the reload resolved', () => failure !== null);
    expect(failure).toBeUndefined();
    expect(pool.children.map((child) => child.config)).toEqual([next, next]);
    pool.stopRestarting();
  });
});
