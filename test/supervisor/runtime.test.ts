/**
 * Enforcement by the supervisor: max runtime, silent (busy) children, the
 * memory cap, and a handler's own subprocesses dying with their child.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAlive, readPidFile, trackPidFile, useProcessGuard, waitForExit } from '../helpers/processes.js';
import { startSupervisor, waitForReplacement } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-runtime-');

describe('runtime, heartbeat and memory enforcement', () => {
  it('a handler that ignores its signal past max runtime: the child is stopped, the attempt ends TIMEOUT:MAX_RUNTIME, the child replaced', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ name: 'sleepy', handler: 'sleep', max_runtime_seconds: 1, kill_grace_seconds: 0.5 }],
    });
    const [first] = await sup.children('sleepy');
    const { id } = await sup.queue.enqueue({ class: 'sleepy', payload: { ms: 60_000 }, maxRetries: 0 });

    const { job, attempts } = await sup.waitForJob(id, 'FAILED');
    expect(job.error_code).toBe('TIMEOUT:MAX_RUNTIME');
    expect(attempts.map((a) => [a.status, a.error_code])).toEqual([['FAILED', 'TIMEOUT:MAX_RUNTIME']]);
    // the handler ran about max_runtime_seconds before it was stopped, not its full minute
    expect(attempts[0]!.finished_at! - attempts[0]!.started_at).toBeLessThan(10_000);

    const killed = await sup.waitForEvent('CHILD_KILLED', { class: 'sleepy', pid: first!.pid });
    expect(killed.reason).toBe('max_runtime');
    await waitForReplacement(sup, 'sleepy', first!.pid);
    expect(await waitForExit(first!.pid, 5_000)).toBe(true);
    await sup.stop();
  });

  it('a handler that lets go when its signal aborts: TIMEOUT:MAX_RUNTIME, and the child is kept', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ name: 'polite', handler: 'respects-signal', max_runtime_seconds: 1, kill_grace_seconds: 0.5 }],
    });
    const [child] = await sup.children('polite');
    const { id } = await sup.queue.enqueue({ class: 'polite', payload: { ms: 60_000 }, maxRetries: 0 });

    const { job, attempts } = await sup.waitForJob(id, 'FAILED');
    expect(job.error_code).toBe('TIMEOUT:MAX_RUNTIME');
    expect(attempts.map((a) => [a.status, a.error_code])).toEqual([['FAILED', 'TIMEOUT:MAX_RUNTIME']]);
    // the child let go in time: nothing was killed, and it takes the next job
    const next = await sup.queue.enqueue({ class: 'polite', payload: { ms: 10 }, maxRetries: 0 });
    const done = await sup.waitForJob(next.id, 'SUCCEEDED');
    expect(done.job.owner_id).toBe(child?.id);
    expect(sup.events('CHILD_KILLED')).toEqual([]);
    expect(sup.events('CHILD_EXITED')).toEqual([]);
    await sup.stop();
  });

  it('a busy loop (no heartbeats) inside max runtime: killed for a stale heartbeat, attempt WORKER:UNRESPONSIVE, child replaced', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ name: 'spin', handler: 'busy-loop', heartbeat_seconds: 0.5, lease_seconds: 5, max_runtime_seconds: 30, kill_grace_seconds: 0.5 }],
    });
    const [first] = await sup.children('spin');
    const { id } = await sup.queue.enqueue({ class: 'spin', payload: {}, maxRetries: 0 });

    const { job, attempts } = await sup.waitForJob(id, 'FAILED');
    expect(job.error_code).toBe('WORKER:UNRESPONSIVE');
    expect(attempts.map((a) => [a.status, a.error_code])).toEqual([['FAILED', 'WORKER:UNRESPONSIVE']]);

    const killed = await sup.waitForEvent('CHILD_KILLED', { class: 'spin', pid: first!.pid });
    expect(killed.reason).toBe('stale_heartbeat');
    const { dead } = await waitForReplacement(sup, 'spin', first!.pid);
    // a busy child cannot run its SIGTERM handler: only SIGKILL ends it
    expect(dead.exit_signal).toBe('SIGKILL');
    await sup.stop();
  });

  it('a busy loop past max runtime: the child is killed and the attempt ends TIMEOUT:MAX_RUNTIME', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ name: 'spin', handler: 'busy-loop', heartbeat_seconds: 0.5, lease_seconds: 5, max_runtime_seconds: 1, kill_grace_seconds: 0.5 }],
    });
    const [first] = await sup.children('spin');
    const { id } = await sup.queue.enqueue({ class: 'spin', payload: {}, maxRetries: 0 });

    const { job, attempts } = await sup.waitForJob(id, 'FAILED');
    expect(job.error_code).toBe('TIMEOUT:MAX_RUNTIME');
    expect(attempts.map((a) => [a.status, a.error_code])).toEqual([['FAILED', 'TIMEOUT:MAX_RUNTIME']]);
    const killed = await sup.waitForEvent('CHILD_KILLED', { class: 'spin', pid: first!.pid });
    expect(['max_runtime', 'stale_heartbeat']).toContain(killed.reason);
    await waitForReplacement(sup, 'spin', first!.pid);
    await sup.stop();
  });

  it('a memory hog past max_memory_mb: the child is killed, the attempt ends RESOURCE:MEMORY, the child replaced', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ name: 'hog', handler: 'memory-hog', max_memory_mb: 150, kill_grace_seconds: 0.5 }],
    });
    const [first] = await sup.children('hog');
    const { id } = await sup.queue.enqueue({ class: 'hog', payload: { mb: 600 }, maxRetries: 0 });

    const { job, attempts } = await sup.waitForJob(id, 'FAILED');
    expect(job.error_code).toBe('RESOURCE:MEMORY');
    expect(attempts.map((a) => [a.status, a.error_code])).toEqual([['FAILED', 'RESOURCE:MEMORY']]);

    const killed = await sup.waitForEvent('CHILD_KILLED', { class: 'hog', pid: first!.pid });
    expect(killed.reason).toBe('memory');
    await waitForReplacement(sup, 'hog', first!.pid);
    expect(await waitForExit(first!.pid, 5_000)).toBe(true);
    await sup.stop();
  });

  it("a handler's grandchild dies with its child when the child is killed", async () => {
    const dir = newDir();
    const pidFile = path.join(dir, 'grandchild.pids');
    trackPidFile(pidFile);
    const sup = await startSupervisor({
      dir,
      classes: [{ name: 'parent', handler: 'grandchild', max_runtime_seconds: 1, kill_grace_seconds: 0.5 }],
    });
    const [first] = await sup.children('parent');
    const { id } = await sup.queue.enqueue({ class: 'parent', payload: { pidFile }, maxRetries: 0 });

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
