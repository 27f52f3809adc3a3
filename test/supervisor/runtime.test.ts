/**
 * Enforcement by the supervisor: max runtime, silent (busy) children, the
 * memory cap, and a handler's own subprocesses dying with their child.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAlive, readPidFile, trackedPidFile, useProcessGuard, waitForExit } from '../helpers/processes.js';
import type { JobDetails } from '../../src/queue/queue.js';
import type { WorkerRow } from '../../src/store/types.js';
import { startWithJob, waitForReplacement, type ClassSpec, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-runtime-');

/** The job ends FAILED after its one attempt, with `code` on the job and on the attempt. */
async function failsOnceWith(sup: SupervisorHandle, id: number, code: string): Promise<JobDetails> {
  const details = await sup.waitForJob(id, 'FAILED');
  expect(details.job.error_code).toBe(code);
  expect(details.attempts.map((a) => [a.status, a.error_code])).toEqual([['FAILED', code]]);
  return details;
}

/** Why the supervisor killed this child: its CHILD_KILLED line's reason. */
async function killReason(sup: SupervisorHandle, child: WorkerRow | undefined): Promise<unknown> {
  return (await sup.waitForEvent('CHILD_KILLED', { class: child!.class!, pid: child!.pid })).reason;
}

/** The busy-loop handler's class: it sends no heartbeats while it spins. */
function busyLoop(maxRuntimeSeconds: number): ClassSpec {
  return {
    name: 'spin',
    handler: 'busy-loop',
    heartbeat_seconds: 0.5,
    lease_seconds: 5,
    max_runtime_seconds: maxRuntimeSeconds,
    kill_grace_seconds: 0.5,
  };
}

describe('runtime, heartbeat and memory enforcement', () => {
  it('a handler that ignores its signal past max runtime: the child is stopped, the attempt ends TIMEOUT:MAX_RUNTIME, the child replaced', async () => {
    const { sup, first, id } = await startWithJob(
      newDir(),
      { name: 'sleepy', handler: 'sleep', max_runtime_seconds: 1, kill_grace_seconds: 0.5 },
      { payload: { ms: 60_000 }, maxRetries: 0 },
    );

    await failsOnceWith(sup, id, 'TIMEOUT:MAX_RUNTIME');
    // stopped, not finished: the handler ignored its signal, so only the max-runtime kill ended its minute's sleep
    expect(await killReason(sup, first)).toBe('max_runtime');
    await waitForReplacement(sup, 'sleepy', first!.pid);
    expect(await waitForExit(first!.pid, 5_000)).toBe(true);
    await sup.stop();
  });

  it('a handler that lets go when its signal aborts: TIMEOUT:MAX_RUNTIME, and the child is kept', async () => {
    const {
      sup,
      first: child,
      id,
    } = await startWithJob(
      newDir(),
      { name: 'polite', handler: 'respects-signal', max_runtime_seconds: 1, kill_grace_seconds: 0.5 },
      { payload: { ms: 60_000 }, maxRetries: 0 },
    );

    await failsOnceWith(sup, id, 'TIMEOUT:MAX_RUNTIME');
    // the child let go in time: nothing was killed, and it takes the next job
    const next = await sup.queue.enqueue({ class: 'polite', payload: { ms: 10 }, maxRetries: 0 });
    const done = await sup.waitForJob(next.id, 'SUCCEEDED');
    expect(done.job.owner_id).toBe(child?.id);
    expect(sup.events('CHILD_KILLED')).toEqual([]);
    expect(sup.events('CHILD_EXITED')).toEqual([]);
    await sup.stop();
  });

  it('a busy loop (no answers to pings) inside max runtime: killed as unresponsive, attempt WORKER:UNRESPONSIVE, child replaced', async () => {
    const { sup, first, id } = await startWithJob(newDir(), busyLoop(30), { payload: {}, maxRetries: 0 });

    await failsOnceWith(sup, id, 'WORKER:UNRESPONSIVE');

    expect(await killReason(sup, first)).toBe('unresponsive');
    const { dead } = await waitForReplacement(sup, 'spin', first!.pid);
    // a busy child cannot run its SIGTERM handler: only SIGKILL ends it
    expect(dead.exit_signal).toBe('SIGKILL');
    await sup.stop();
  });

  it("a busy loop that holds SQLite's write lock: the outage it causes excuses nothing, it is killed as unresponsive and the queue writes again", async () => {
    const dir = newDir();
    // Silent for 3 heartbeats (6 s): longer than the supervisor's own writes take to give up on the lock (about 4 s).
    const spin = { ...busyLoop(60), heartbeat_seconds: 2, lease_seconds: 10 };
    const { sup, first, id } = await startWithJob(dir, spin, {
      payload: { lockDatabase: path.join(dir, 'queue.db') },
      maxRetries: 0,
    });

    await failsOnceWith(sup, id, 'WORKER:UNRESPONSIVE');
    expect(await killReason(sup, first)).toBe('unresponsive');
    // With the lock gone, the replacement registers: a write.
    await waitForReplacement(sup, 'spin', first!.pid);
    await sup.stop();
  });

  it('a busy loop past max runtime: the child is killed and the attempt ends TIMEOUT:MAX_RUNTIME', async () => {
    const { sup, first, id } = await startWithJob(newDir(), busyLoop(1), { payload: {}, maxRetries: 0 });

    await failsOnceWith(sup, id, 'TIMEOUT:MAX_RUNTIME');
    expect(['max_runtime', 'unresponsive']).toContain(await killReason(sup, first));
    await waitForReplacement(sup, 'spin', first!.pid);
    await sup.stop();
  });

  it('a memory hog past max_memory_mb: the child is killed, the attempt ends RESOURCE:MEMORY, the child replaced', async () => {
    const { sup, first, id } = await startWithJob(
      newDir(),
      { name: 'hog', handler: 'memory-hog', max_memory_mb: 150, kill_grace_seconds: 0.5 },
      { payload: { mb: 600 }, maxRetries: 0 },
    );

    await failsOnceWith(sup, id, 'RESOURCE:MEMORY');

    expect(await killReason(sup, first)).toBe('memory');
    await waitForReplacement(sup, 'hog', first!.pid);
    expect(await waitForExit(first!.pid, 5_000)).toBe(true);
    await sup.stop();
  });

  it("a handler's grandchild dies with its child when the child is killed", async () => {
    const dir = newDir();
    const pidFile = trackedPidFile(dir);
    const { sup, first, id } = await startWithJob(
      dir,
      { name: 'parent', handler: 'grandchild', max_runtime_seconds: 1, kill_grace_seconds: 0.5 },
      { payload: { pidFile }, maxRetries: 0 },
    );

    const [grandchild] = await waitFor('the grandchild pid file', () => {
      const pids = readPidFile(pidFile);
      return pids.length > 0 ? pids : undefined;
    });
    expect(isAlive(grandchild!)).toBe(true);

    const { job } = await sup.waitForJob(id, 'FAILED');
    expect(job.error_code).toBe('TIMEOUT:MAX_RUNTIME');
    await waitForReplacement(sup, 'parent', first!.pid);
    expect(await waitForExit(first!.pid, 5_000)).toBe(true);
    expect(await waitForExit(grandchild!, 5_000)).toBe(true);
    await sup.stop();
  });
});
