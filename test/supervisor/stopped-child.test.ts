/**
 * A child that cannot run (SIGSTOPped, or stuck in a write transaction)
 * holds SQLite's write lock and its leases for as long as it lives; it
 * cannot run a SIGTERM handler either. The supervisor SIGKILLs it at once,
 * and one that holds its write turn is found within a second: the other
 * children's jobs, waiting for their turns, keep their leases and their
 * runtimes.
 */
import Database from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { isAlive, onCleanup, useProcessGuard, waitForExit } from '../helpers/processes.js';
import { startSupervisor, startWithJob, waitForReplacement, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-stopped-');

/** How soon a stopped child must be gone, counted from the stop. */
const GONE_WITHIN_MS = 2_000;

/** Whether some process holds the database's write lock now: a try to take it, given up at once. */
function lockProbe(database: string): () => boolean {
  const db = new Database(database, { timeout: 0 });
  onCleanup(() => void db.close());
  return () => {
    try {
      db.exec('BEGIN IMMEDIATE');
      db.exec('ROLLBACK');
      return false;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
      return true;
    }
  };
}

/** Send `signal` to `pid`: false when it is gone (it may exit between any look and the kill). */
function signalled(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/**
 * SIGSTOP the child `pid` at a moment it holds the write lock: stop it, and
 * if the lock is free (or only held for a moment, by another writer), let it
 * go on and try again. Resolves with the time of the stop that caught it,
 * or undefined if the child exited first (a child between two jobs may).
 */
async function stopHoldingTheLock(pid: number, lockHeld: () => boolean): Promise<number | undefined> {
  return waitFor(
    `child ${pid} stopped while it holds the write lock`,
    async () => {
      if (!isAlive(pid) || !signalled(pid, 'SIGSTOP')) return { gone: true } as const;
      const stoppedAt = Date.now();
      if (lockHeld()) {
        await sleep(30);
        if (lockHeld()) return stoppedAt;
      }
      signalled(pid, 'SIGCONT');
      return undefined;
    },
    { timeoutMs: 15_000, intervalMs: 7 },
  ).then((stop) => (typeof stop === 'number' ? stop : undefined));
}

/** Wait for a child of `cls` that runs a job; its pid. */
async function busyChild(sup: SupervisorHandle, cls: string): Promise<number> {
  const child = await waitFor(`a busy child of ${cls}`, async () =>
    (await sup.children(cls)).find((row) => row.state === 'busy' && row.pid !== null),
  );
  return child.pid!;
}

/** A child that writes progress back to back, from jobs that end (so its restarts stay quick); its grace is long. */
const NOISY = {
  name: 'noisy',
  handler: 'progress',
  heartbeat_seconds: 1,
  lease_seconds: 4,
  kill_grace_seconds: 5,
  max_retries: 1_000,
  restart: { max_restarts: 1_000, within_seconds: 60 },
};

describe('a stopped child', () => {
  it('SIGSTOPped while its job runs: SIGKILLed as unresponsive within 2 s, its grace not waited, its job blamed', async () => {
    const { sup, first, id } = await startWithJob(
      newDir(),
      // A grace far longer than the deadline: only a kill that skips it passes.
      { name: 'stopped', handler: 'sleep', heartbeat_seconds: 0.3, kill_grace_seconds: 5 },
      { payload: { ms: 60_000 }, maxRetries: 0 },
    );
    const pid = first!.pid!;
    await sup.waitForJob(id, 'RUNNING');

    process.kill(pid, 'SIGSTOP');
    const stoppedAt = Date.now();
    const gone = await waitForExit(pid, GONE_WITHIN_MS);
    console.log(`stopped child gone ${Date.now() - stoppedAt} ms after SIGSTOP`);
    signalled(pid, 'SIGKILL');
    expect(gone, `child ${pid} still there ${GONE_WITHIN_MS} ms after SIGSTOP`).toBe(true);

    const killed = await sup.waitForEvent('CHILD_KILLED', { pid });
    expect(killed.reason).toBe('unresponsive');
    const details = await sup.waitForJob(id, 'FAILED');
    expect(details.job.error_code).toBe('WORKER:UNRESPONSIVE');
    const { dead } = await waitForReplacement(sup, 'stopped', pid);
    expect(dead.exit_signal).toBe('SIGKILL');
    await waitFor('the replacement ready', async () => (await sup.children('stopped')).length === 1);
    await sup.stop();
  });

  it('SIGSTOPped while it holds the write lock, its pings 3 s apart: found by its turn and gone within 2 s', async () => {
    const sup = await startSupervisor({ dir: newDir(), classes: [NOISY] });
    await sup.queue.enqueueMany(
      Array.from({ length: 5 }, () => ({ class: 'noisy', payload: { ms: 60_000, everyMs: 0 }, maxRetries: 1_000 })),
    );
    const pid = await busyChild(sup, 'noisy');
    const stoppedAt = (await stopHoldingTheLock(pid, lockProbe(sup.database)))!;

    const gone = await waitForExit(pid, GONE_WITHIN_MS);
    console.log(`child stopped holding the lock gone ${Date.now() - stoppedAt} ms after SIGSTOP`);
    signalled(pid, 'SIGKILL');
    expect(gone, `child ${pid} still there ${GONE_WITHIN_MS} ms after SIGSTOP`).toBe(true);

    const killed = await sup.waitForEvent('CHILD_KILLED', { pid });
    expect(killed).toMatchObject({ reason: 'unresponsive', code: 'WORKER:UNRESPONSIVE' });
    expect(killed.turn_held_ms).toBeGreaterThan(1_000);
    await waitForReplacement(sup, 'noisy', pid);
    await waitFor('the replacement ready', async () => (await sup.children('noisy')).length === 1);
    await sup.stop();
  });

  it(
    "a sibling class's child stopped again and again holding the lock: another child's 20 one-second jobs all succeed",
    { timeout: 180_000 },
    async () => {
      const steady = { name: 'steady', handler: 'progress', max_runtime_seconds: 4, max_retries: 0 };
      const sup = await startSupervisor({ dir: newDir(), classes: [steady, NOISY] });
      const lockHeld = lockProbe(sup.database);
      await sup.queue.enqueueMany(
        Array.from({ length: 200 }, () => ({ class: 'noisy', payload: { ms: 400, everyMs: 0 }, maxRetries: 1_000 })),
      );
      const jobs = await sup.queue.enqueueMany(
        Array.from({ length: 20 }, () => ({ class: 'steady', payload: { ms: 1_000, everyMs: 100 }, maxRetries: 0 })),
      );
      const ended = async () => {
        const statuses = await Promise.all(jobs.map(async ({ id }) => (await sup.queue.get(id))?.job.status));
        return statuses.every((status) => status === 'SUCCEEDED' || status === 'FAILED');
      };

      const goneAfterMs: number[] = [];
      while (!(await ended())) {
        const pid = await busyChild(sup, 'noisy');
        const stoppedAt = await stopHoldingTheLock(pid, lockHeld);
        if (stoppedAt === undefined) continue;
        expect(await waitForExit(pid, 20_000), `stopped child ${pid} never killed`).toBe(true);
        goneAfterMs.push(Date.now() - stoppedAt);
      }
      console.log(`stopped ${goneAfterMs.length} times holding the lock; gone after (ms): ${goneAfterMs.join(', ')}`);

      const outcomes = await Promise.all(jobs.map(async ({ id }) => (await sup.queue.get(id))!.job));
      const failed = outcomes.filter((job) => job.status !== 'SUCCEEDED').map((job) => `${job.id} ${job.error_code}`);
      expect(failed, 'steady jobs that did not succeed').toEqual([]);
      expect(goneAfterMs.length).toBeGreaterThanOrEqual(5);
      expect(sup.events('CHILD_KILLED', { class: 'steady' })).toEqual([]);
      await sup.stop();
    },
  );
});
