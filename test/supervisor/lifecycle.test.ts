/**
 * The supervisor's own life: a child SIGKILLed mid-job, the supervisor
 * SIGKILLed (children follow it; a new supervisor recovers), and SIGTERM
 * drains and hands back what does not finish in time.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  isAlive,
  readPidFile,
  trackedPidFile,
  useProcessGuard,
  waitForExit,
  waitForReaped,
} from '../helpers/processes.js';
import { startSupervisor, waitForReplacement } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { claimJobs } from '../helpers/fenced-writes.js';

useProcessGuard();
const newDir = tempDir('leasehold-lifecycle-');

describe('a child SIGKILLed mid-job', () => {
  it('its job is taken back at once and re-run by another child', async () => {
    const dir = newDir();
    const markFile = path.join(dir, 'runs.jsonl');
    const sup = await startSupervisor({
      dir,
      classes: [{ name: 'work', handler: 'slow', processes: 2, max_retries: 3 }],
    });
    const { id } = await sup.queue.enqueue({
      class: 'work',
      payload: { msByAttempt: [60_000, 200], markFile },
      maxRetries: 3,
    });

    const running = await sup.waitForJob(id, 'RUNNING');
    const holder = (await sup.children('work')).find((c) => c.id === running.job.owner_id);
    expect(holder).toBeDefined();

    process.kill(holder!.pid, 'SIGKILL');
    const killedAt = Date.now();
    const reclaimed = await sup.waitForJob(id, (d) => d.job.attempts >= 2);
    const seenAfterMs = Date.now() - killedAt;
    const claimedAgainAt = reclaimed.attempts.find((a) => a.attempt === 2)?.started_at;
    console.log(
      `child SIGKILL → job ${id} claimed again: ${claimedAgainAt === undefined ? '?' : claimedAgainAt - killedAt} ms by the database clock, seen by the test after ${seenAfterMs} ms`,
    );

    const { job, attempts } = await sup.waitForJob(id, 'SUCCEEDED');
    expect(attempts.map((a) => [a.attempt, a.status, a.error_code])).toEqual([
      [1, 'FAILED', 'WORKER:CRASHED'],
      [2, 'SUCCEEDED', null],
    ]);
    expect(attempts[0]?.error_detail).toContain('SIGKILL');
    expect(job.owner_id).not.toBe(holder!.id);
    expect(job.releases).toBe(0);

    const { dead } = await waitForReplacement(sup, 'work', holder!.pid);
    expect(dead.exit_signal).toBe('SIGKILL');
    await sup.waitForChildren('work', 2);

    // the log tells the story: exit by signal, recovery, restart, spawn of the replacement
    const exited = await sup.waitForEvent('CHILD_EXITED', { pid: holder!.pid });
    expect(exited.exit_signal).toBe('SIGKILL');
    expect(exited.class).toBe('work');
    const recovered = await sup.waitForEvent('JOB_RECOVERED', { job_id: id });
    expect(recovered.code).toBe('WORKER:CRASHED');
    expect(recovered.outcome).toBe('QUEUED');
    await sup.waitForEvent('CHILD_RESTART_SCHEDULED', { class: 'work' });
    expect(sup.events('CHILD_SPAWNED', { class: 'work' }).length).toBe(3);

    expect(await sup.stop()).toBe(0);
  });
});

describe('the supervisor SIGKILLed', () => {
  it('its children and their grandchildren exit on their own; a new supervisor runs the job to the end', async () => {
    const dir = newDir();
    const pidFile = trackedPidFile(dir);
    const sup = await startSupervisor({
      dir,
      classes: [
        { name: 'work', handler: 'slow', max_retries: 3 },
        { name: 'parent', handler: 'grandchild', max_runtime_seconds: 60 },
      ],
    });
    const { id } = await sup.queue.enqueue({ class: 'work', payload: { msByAttempt: [60_000, 200] }, maxRetries: 3 });
    const grand = await sup.queue.enqueue({ class: 'parent', payload: { pidFile }, maxRetries: 0 });
    await sup.waitForJob(id, 'RUNNING');
    await sup.waitForJob(grand.id, 'RUNNING');
    const [grandchild] = await waitFor('the grandchild pid', () => {
      const pids = readPidFile(pidFile);
      return pids.length > 0 ? pids : undefined;
    });
    const children = await sup.children();
    expect(children.length).toBe(2);

    sup.kill('SIGKILL');
    const killedAt = Date.now();
    expect(await sup.waitForExit(5_000)).not.toBeNull();
    for (const child of children) {
      expect(
        await waitForExit(child.pid, 5_000),
        `child ${child.pid} (${child.class}) still alive 5 s after its supervisor was SIGKILLed`,
      ).toBe(true);
    }
    console.log(`supervisor SIGKILL → all children gone after ${Date.now() - killedAt} ms`);
    expect(await waitForExit(grandchild!, 5_000)).toBe(true);

    // A new supervisor on the same database (only the slow class this time) finishes the job.
    const next = await startSupervisor({ dir, classes: [{ name: 'work', handler: 'slow', max_retries: 3 }] });
    const { job, attempts } = await next.waitForJob(id, 'SUCCEEDED', 30_000);
    expect(attempts.at(-1)?.status).toBe('SUCCEEDED');
    // the attempt the SIGKILL cut, and any before the last, ended FAILED or CANCELLED
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(attempts.slice(0, -1).every((a) => a.status === 'FAILED' || a.status === 'CANCELLED')).toBe(true);
    expect(job.owner_id).not.toBe(children.find((c) => c.class === 'work')?.id);
    // nothing of the dead supervisor's stays RUNNING
    expect((await next.queue.list({ status: 'RUNNING' })).length).toBe(0);
    expect((await next.queue.list({ status: 'CLAIMED' })).length).toBe(0);
    expect(await next.stop()).toBe(0);
  });

  it('a child stuck in a busy loop exits too when its supervisor is SIGKILLed', async () => {
    const dir = newDir();
    const sup = await startSupervisor({
      dir,
      classes: [{ name: 'spin', handler: 'busy-loop', max_runtime_seconds: 60, lease_seconds: 30 }],
    });
    const markFile = path.join(dir, 'spin.jsonl');
    await sup.queue.enqueue({ class: 'spin', payload: { markFile }, maxRetries: 0 });
    // the handler writes its mark, then spins
    await waitFor('the handler to start spinning', () => existsSync(markFile));
    const [child] = await sup.children('spin');

    sup.kill('SIGKILL');
    const killedAt = Date.now();
    expect(await sup.waitForExit(5_000)).not.toBeNull();
    const gone = await waitForExit(child!.pid, 10_000);
    console.log(
      `supervisor SIGKILL → busy child ${gone ? `gone after ${Date.now() - killedAt} ms` : 'still alive after 10 s'}`,
    );
    expect(gone, `busy child ${child!.pid} outlived its SIGKILLed supervisor by 10 s`).toBe(true);
  });

  it('supervisor and children killed together: a new supervisor takes the held job back at start (WORKER:CRASHED) and re-runs it', async () => {
    const dir = newDir();
    // a long lease: the sweeper cannot be the one that takes the job back within this test
    const work = { name: 'work', handler: 'slow', max_retries: 3, lease_seconds: 30 };
    const sup = await startSupervisor({ dir, classes: [work] });
    const { id } = await sup.queue.enqueue({ class: 'work', payload: { msByAttempt: [60_000, 200] }, maxRetries: 3 });
    await sup.waitForJob(id, 'RUNNING');
    const [child] = await sup.children('work');

    // a host-wide kill -9: nobody gets to write anything
    process.kill(-child!.pid, 'SIGKILL');
    sup.kill('SIGKILL');
    expect(await sup.waitForExit(5_000)).not.toBeNull();
    // gone for good (not a zombie waiting for init): "children of this host whose pid is gone"
    expect(await waitForReaped(child!.pid, 10_000)).toBe(true);
    expect((await sup.queue.get(id))?.job.status).toBe('RUNNING');

    const startedAt = Date.now();
    const next = await startSupervisor({ dir, classes: [work] });
    const taken = await next.waitForJob(id, (d) => d.attempts[0]?.status !== 'RUNNING', 10_000);
    console.log(
      `new supervisor started → job ${id} taken back after ${Date.now() - startedAt} ms (${taken.attempts[0]?.error_code})`,
    );
    expect(taken.attempts[0]?.status).toBe('FAILED');
    expect(taken.attempts[0]?.error_code).toBe('WORKER:CRASHED');

    const { attempts } = await next.waitForJob(id, 'SUCCEEDED');
    expect(attempts.map((a) => a.status)).toEqual(['FAILED', 'SUCCEEDED']);
    const recovered = await next.waitForEvent('JOB_RECOVERED', { job_id: id });
    expect(recovered.code).toBe('WORKER:CRASHED');
    // the dead supervisor and child are marked exited in the registry
    const rows = await next.queue.store.workerList({ includeExited: true, limit: 100 });
    const dead = rows.filter((r) => r.pid === child!.pid || r.pid === sup.pid);
    expect(new Set(dead.map((r) => r.pid))).toEqual(new Set([child!.pid, sup.pid]));
    expect(dead.every((r) => r.exited_at !== null)).toBe(true);
    expect(await next.stop()).toBe(0);
  });

  it('the sweeper takes back a job whose holder went silent elsewhere (LEASE:EXPIRED) within about lease + one sweep', async () => {
    const dir = newDir();
    const sup = await startSupervisor({
      dir,
      classes: [{ name: 'work', handler: 'succeed' }],
      sweeperIntervalSeconds: 0.5,
    });
    // a job of a class this supervisor does not run, claimed by a worker on another host that then vanished
    const { id } = await sup.queue.enqueue({ class: 'elsewhere', payload: {}, maxRetries: 3 });
    const [claimed] = await claimJobs(sup.queue.store, {
      classes: ['elsewhere'],
      ownerId: 'other-host:1/elsewhere.0.1',
      limit: 1,
      leaseMs: 1_000,
    });
    expect(claimed?.id).toBe(id);
    await sup.queue.store.jobStart({ id, leaseToken: claimed!.leaseToken, leaseMs: 1_000 });
    const claimedAt = Date.now();

    const { job, attempts } = await sup.waitForJob(id, 'QUEUED', 5_000);
    console.log(`lease of 1 s, sweep every 0.5 s → job ${id} taken back after ${Date.now() - claimedAt} ms`);
    expect(attempts.map((a) => [a.status, a.error_code])).toEqual([['FAILED', 'LEASE:EXPIRED']]);
    expect(job.attempts).toBe(1);
    const recovered = await sup.waitForEvent('JOB_RECOVERED', { job_id: id });
    expect(recovered.code).toBe('LEASE:EXPIRED');
    await sup.waitForEvent('SWEEP');
    expect(await sup.stop()).toBe(0);
  });

  it("the folder of its writer's socket goes when the next supervisor starts on the host", async () => {
    const dir = newDir();
    // The supervisors' temp folder is the test's own: what is in it is theirs alone.
    const env = { TMPDIR: path.join(dir, 'tmp') };
    mkdirSync(env.TMPDIR);
    const writerFolders = () => readdirSync(env.TMPDIR).filter((name) => name.startsWith('leasehold-writer-'));
    const work = { name: 'work', handler: 'succeed' };
    const sup = await startSupervisor({ dir, env, classes: [work] });
    const left = writerFolders();
    expect(left).toHaveLength(1);
    sup.kill('SIGKILL');
    expect(await sup.waitForExit(5_000)).not.toBeNull();

    const next = await startSupervisor({ dir, env, classes: [work] });
    const { id } = await next.queue.enqueue({ class: 'work', payload: {} });
    await next.waitForJob(id, 'SUCCEEDED');
    expect(writerFolders()).toHaveLength(1);
    expect(writerFolders()).not.toContain(left[0]);
    expect(await next.stop()).toBe(0);
    expect(writerFolders()).toEqual([]);
  });
});

describe('SIGTERM', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s drains: the running job finishes, nothing new is claimed, exit code 0',
    async (signal) => {
      const dir = newDir();
      const sup = await startSupervisor({ dir, classes: [{ name: 'work', handler: 'slow' }], shutdownGraceSeconds: 3 });
      const [child] = await sup.children('work');
      const first = await sup.queue.enqueue({ class: 'work', payload: { ms: 1_500 } });
      await sup.waitForJob(first.id, 'RUNNING');
      const second = await sup.queue.enqueue({ class: 'work', payload: { ms: 100 } });

      expect(await sup.stop(undefined, signal)).toBe(0);
      const done = await sup.queue.get(first.id);
      expect(done?.job.status).toBe('SUCCEEDED');
      expect(done?.attempts.map((a) => a.status)).toEqual(['SUCCEEDED']);
      const waiting = await sup.queue.get(second.id);
      expect(waiting?.job.status).toBe('QUEUED');
      expect(waiting?.job.attempts).toBe(0);
      expect((await sup.queue.list({ status: 'RUNNING' })).length).toBe(0);
      expect((await sup.queue.list({ status: 'CLAIMED' })).length).toBe(0);

      expect(sup.events('SHUTDOWN_STARTED').length).toBeGreaterThanOrEqual(1);
      expect(sup.events('SHUTDOWN_COMPLETE').length).toBe(1);
      expect(isAlive(child!.pid)).toBe(false);
      const rows = await sup.allChildren();
      expect(rows.map((row) => row.pid)).toContain(child!.pid);
      expect(rows.every((row) => row.exited_at !== null)).toBe(true);
    },
  );

  it.each([
    ['lets go on abort', 'slow'],
    ['ignores its signal', 'sleep'],
  ])(
    'a job longer than the grace whose handler %s goes back to QUEUED without spending a retry',
    async (_how, handler) => {
      const dir = newDir();
      const sup = await startSupervisor({ dir, classes: [{ name: 'long', handler }], shutdownGraceSeconds: 3 });
      const { id } = await sup.queue.enqueue({ class: 'long', payload: { ms: 60_000 }, maxRetries: 0 });
      await sup.waitForJob(id, 'RUNNING');

      const termAt = Date.now();
      const code = await sup.stop();
      const tookMs = Date.now() - termAt;
      console.log(`SIGTERM with a 60 s job (${handler}): supervisor exited ${code} after ${tookMs} ms`);

      const details = await sup.queue.get(id);
      expect(details?.job.status).toBe('QUEUED');
      expect(details?.job.releases).toBe(1);
      // max_retries 0: had the attempt counted as a failure, the job would be FAILED now
      expect(details?.attempts.map((a) => [a.status, a.error_code])).toEqual([['CANCELLED', 'LEASE:RELEASED']]);
      // the grace was given before the job was stopped
      const started = sup.events('SHUTDOWN_STARTED')[0];
      expect(started).toBeDefined();
      expect(details!.attempts[0]!.finished_at! - Date.parse(started!.ts)).toBeGreaterThanOrEqual(2_500);
      expect(sup.events('SHUTDOWN_COMPLETE').length).toBe(1);
      expect((await sup.queue.list({ status: 'RUNNING' })).length).toBe(0);
    },
  );

  it('a second signal forces: no waiting out the grace, and the job still goes back to QUEUED without spending a retry', async () => {
    const dir = newDir();
    const sup = await startSupervisor({ dir, classes: [{ name: 'long', handler: 'sleep' }], shutdownGraceSeconds: 30 });
    const { id } = await sup.queue.enqueue({ class: 'long', payload: { ms: 60_000 }, maxRetries: 0 });
    await sup.waitForJob(id, 'RUNNING');

    const termAt = Date.now();
    sup.kill('SIGTERM');
    await sup.waitForEvent('SHUTDOWN_STARTED');
    sup.kill('SIGTERM');
    // well inside the 30 s grace
    const exit = await sup.waitForExit(10_000);
    console.log(`second SIGTERM: supervisor exited ${JSON.stringify(exit)} ${Date.now() - termAt} ms after the first`);
    expect(exit).not.toBeNull();

    const details = await sup.queue.get(id);
    expect(details?.job.status).toBe('QUEUED');
    expect(details?.job.releases).toBe(1);
    expect(details?.attempts.map((a) => [a.status, a.error_code])).toEqual([['CANCELLED', 'LEASE:RELEASED']]);
  });
});
