/**
 * A handler module's life in its child: `setup` runs once per child and
 * what it opens is every job's `ctx.resources`; `teardown` runs once on
 * drain, after the last job, and one that hangs does not keep the child past
 * the shutdown grace; a `setup` that fails explains the child's failed start
 * in `leasehold workers` and the log, under the class's usual restart rules.
 */
import { execa } from 'execa';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-handler-life-');
const CLI = fileURLToPath(new URL('../../dist/cli/leasehold.js', import.meta.url));

const lines = (file: string): string[] => readFileSync(file, 'utf8').trim().split('\n');

function workers(sup: SupervisorHandle) {
  return execa('node', [CLI, '--config', sup.configFile, 'workers', '--all'], { reject: false, timeout: 60_000 });
}

describe('setup and teardown', () => {
  it('opens a resource once per child for 100 jobs, and closes it once on drain', async () => {
    const dir = newDir();
    const sup = await startSupervisor({
      dir,
      env: { ...process.env, LIFE_DIR: dir } as Record<string, string>,
      classes: [{ name: 'work', handler: 'resources', processes: 2, concurrency: 2 }],
    });
    const jobs = await sup.queue.enqueueMany(Array.from({ length: 100 }, () => ({ class: 'work', payload: {} })));
    const results = await Promise.all(
      jobs.map(async ({ id }) => (await sup.waitForJob(id, 'SUCCEEDED', 60_000)).job.result),
    );
    const children = (await sup.allChildren('work')).map((c) => c.pid).sort();
    expect(children).toHaveLength(2);
    expect(lines(path.join(dir, 'setup.log')).map(Number).sort(), 'one setup per child').toEqual(children);
    for (const result of results)
      expect(result, 'resources from its own child').toMatchObject({ openedBy: (result as { pid: number }).pid });

    expect(await sup.stop(30_000)).toBe(0);
    const teardowns = lines(path.join(dir, 'teardown.log')).map((line) => line.split(' ').map(Number));
    expect(teardowns.map(([pid]) => pid).sort(), 'one teardown per child').toEqual(children);
    for (const [pid, openedBy] of teardowns) expect(openedBy, 'teardown gets what setup opened').toBe(pid);
    expect(
      teardowns.reduce((sum, [, , count]) => sum + count!, 0),
      'every job used the resources',
    ).toBe(100);
  });

  it('a teardown that hangs does not keep the child past the shutdown grace, and the log says so', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      shutdownGraceSeconds: 2,
      classes: [{ name: 'work', handler: 'teardown-hangs' }],
    });
    const { id } = await sup.queue.enqueue({ class: 'work', payload: {} });
    await sup.waitForJob(id, 'SUCCEEDED');
    expect(await sup.stop(30_000)).toBe(0);
    expect(sup.events('TEARDOWN_TIMEOUT')).toHaveLength(1);
    expect(sup.events('SHUTDOWN_GRACE_OVER'), 'the child left within the grace').toEqual([]);
    expect(sup.events('CHILD_EXITED')[0]).toMatchObject({ reason: 'drained' });
  });

  it('a child still in its setup when the supervisor stops hears the drain, and leaves once set up', async () => {
    const dir = newDir();
    const sup = await startSupervisor({
      dir,
      env: { ...process.env, LIFE_DIR: dir } as Record<string, string>,
      shutdownGraceSeconds: 20,
      classes: [{ name: 'work', handler: 'setup-waits', waitReady: false }],
    });
    await waitFor('the child’s setup to begin', () => existsSync(path.join(dir, 'setup-begun.log')) || undefined);
    const stopped = sup.stop(60_000);
    await waitFor('the shutdown to start', () => sup.events('SHUTDOWN_STARTED')[0]);
    writeFileSync(path.join(dir, 'go'), '');
    expect(await stopped).toBe(0);
    expect(sup.events('SHUTDOWN_GRACE_OVER'), 'the child left on the drain, not at the grace').toEqual([]);
    expect(sup.events('CHILD_EXITED')[0]).toMatchObject({ reason: 'drained' });
  });

  it('a setup that fails explains the failed start in leasehold workers and the log, and restarts as a crash would', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [
        { name: 'work', handler: 'setup-fails', waitReady: false, restart: { max_restarts: 2, within_seconds: 60 } },
      ],
    });
    const exited = await sup.waitForEvent('CHILD_EXITED', { reason: 'startup_failed' });
    expect(exited.msg).toContain('setup failed: cannot reach the billing database');
    await sup.waitForEvent('CRASH_LOOP', {}, 30_000);
    expect(sup.events('CLASS_DISABLED'), 'a failed setup may pass: it is restarted, not given up at once').toEqual([]);
    const listed = await workers(sup);
    expect(listed.stdout).toMatch(/failed \(code 78\)/);
    expect(listed.stdout).toMatch(
      /class work disabled since .*: crash loop: .*; the last could not start: setup failed: cannot reach the billing database/,
    );
    expect(await sup.stop()).toBe(0);
  });
});
