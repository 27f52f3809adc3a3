/**
 * A child that cannot run (SIGSTOPped) holds its leases for as long as it
 * lives, and cannot run a SIGTERM handler. It holds no lock: on SQLite its
 * writes are the supervisor's writer's, so the other children write on
 * while it is stopped, and their jobs keep their leases and their runtimes.
 * It is SIGKILLed once it has missed its pings.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { isAlive, onCleanup, useProcessGuard, waitForExit } from '../helpers/processes.js';
import { startSupervisor, startWithJob, waitForReplacement, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-stopped-');

/** How soon a stopped child must be gone, counted from the stop. */
const GONE_WITHIN_MS = 2_000;

/**
 * Another process's write, which waits for the lock up to `waitMs` (SQLite's
 * busy timeout); false when it could not take the lock by then.
 */
function lockTaker(database: string, waitMs: number): () => boolean {
  const db = new Database(database, { timeout: waitMs });
  onCleanup(() => void db.close());
  return () => {
    try {
      db.exec('BEGIN IMMEDIATE');
      db.exec('ROLLBACK');
      return true;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
      return false;
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

/** The progress written so far by the running jobs of `cls`, as one string that changes with each write. */
async function progressOf(sup: SupervisorHandle, cls: string): Promise<string> {
  const running = await sup.queue.store.jobList({ status: 'RUNNING', class: cls, limit: 100 });
  return running.map((job) => `${job.id}:${job.progress ?? ''}`).join(',');
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

  it('SIGSTOPped again and again in the middle of its writes: it holds no lock, another process writes while it is stopped', async () => {
    // Pings 2 s apart: a stopped child is killed for its silence only after 6 s, far longer than any stop here.
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ ...NOISY, heartbeat_seconds: 2, lease_seconds: 10 }],
    });
    await sup.queue.enqueueMany(
      Array.from({ length: 5 }, () => ({ class: 'noisy', payload: { ms: 60_000, everyMs: 0 }, maxRetries: 1_000 })),
    );
    const pid = await busyChild(sup, 'noisy');
    // Far longer than a transaction of the queue, far shorter than the child's silence before its kill.
    const otherWrite = lockTaker(sup.database, 3_000);
    for (let stop = 0; stop < 20; stop++) {
      // Stopped at a moment it writes: its progress goes on between two stops, a write back to back with the next.
      const before = await progressOf(sup, 'noisy');
      await waitFor('the child writing progress', async () => (await progressOf(sup, 'noisy')) !== before);
      expect(signalled(pid, 'SIGSTOP'), `child ${pid} gone before stop ${stop}`).toBe(true);
      const wrote = otherWrite();
      const alive = isAlive(pid) && sup.events('CHILD_KILLED', { pid }).length === 0;
      signalled(pid, 'SIGCONT');
      expect(wrote, `stop ${stop}: another process could not write while child ${pid} was stopped`).toBe(true);
      expect(alive, `stop ${stop}: child ${pid} was killed before another process could write`).toBe(true);
    }
    expect(sup.events('CHILD_KILLED')).toEqual([]);
    await sup.stop();
  });

  it(
    "a sibling class's child stopped again and again mid-job: another child's 20 one-second jobs all succeed",
    { timeout: 180_000 },
    async () => {
      const steady = { name: 'steady', handler: 'progress', max_runtime_seconds: 4, max_retries: 0 };
      const sup = await startSupervisor({ dir: newDir(), classes: [steady, NOISY] });
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
        if (!signalled(pid, 'SIGSTOP')) continue;
        const stoppedAt = Date.now();
        expect(await waitForExit(pid, 20_000), `stopped child ${pid} never killed`).toBe(true);
        goneAfterMs.push(Date.now() - stoppedAt);
      }
      console.log(`stopped ${goneAfterMs.length} times mid-job; gone after (ms): ${goneAfterMs.join(', ')}`);

      const outcomes = await Promise.all(jobs.map(async ({ id }) => (await sup.queue.get(id))!.job));
      const failed = outcomes.filter((job) => job.status !== 'SUCCEEDED').map((job) => `${job.id} ${job.error_code}`);
      expect(failed, 'steady jobs that did not succeed').toEqual([]);
      expect(goneAfterMs.length).toBeGreaterThanOrEqual(3);
      expect(sup.events('CHILD_KILLED', { class: 'steady' })).toEqual([]);
      await sup.stop();
    },
  );
});
