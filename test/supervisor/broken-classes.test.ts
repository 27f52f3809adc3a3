/**
 * Classes that cannot run: crash loops, classes whose handler cannot be
 * loaded, and config checking.
 */
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { fixture, startSupervisor, SUPERVISE_BIN, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-broken-classes-');

/**
 * Start-up refuses a handler that cannot load, so a class loses its handler
 * the way a running one can: the file goes away, then its child dies and
 * its restart cannot load it.
 */
async function loseHandler(sup: SupervisorHandle, cls: string, handler: string): Promise<void> {
  const [child] = await sup.children(cls);
  rmSync(handler);
  process.kill(child!.pid, 'SIGKILL');
}

/** Every row of disabled_classes, whoever wrote it (the store's own read shows live supervisors' rows only). */
function disabledRows(database: string): unknown[] {
  const db = new Database(database, { readonly: true });
  try {
    return db.prepare('SELECT supervisor_id, class, reason FROM disabled_classes').all();
  } finally {
    db.close();
  }
}

describe('crash loops and broken classes', () => {
  it('a class whose handler always kills its child stops restarting after max_restarts and logs CRASH_LOOP; other classes keep working', async () => {
    const dir = newDir();
    const sup = await startSupervisor({
      dir,
      classes: [
        { name: 'crashy', handler: 'exit', max_retries: 10, restart: { max_restarts: 2, within_seconds: 60 } },
        { name: 'ok', handler: 'succeed' },
      ],
    });
    for (let n = 0; n < 5; n++) await sup.queue.enqueue({ class: 'crashy', payload: { n }, maxRetries: 10 });

    const loop = await sup.waitForEvent('CRASH_LOOP', { class: 'crashy' }, 30_000);
    expect(loop.level).toBe('error');
    await waitFor('no live crashy child', async () => (await sup.children('crashy')).length === 0);

    // the healthy class still works after the crash loop
    const ok = await sup.queue.enqueue({ class: 'ok', payload: { after: 'crash loop' } });
    await sup.waitForJob(ok.id, 'SUCCEEDED');
    expect(sup.events('CHILD_SPAWNED', { class: 'crashy' }).length).toBe(3);
    expect(sup.events('CHILD_EXITED', { class: 'crashy' }).length).toBe(3);
    expect((await sup.queue.list({ status: 'RUNNING' })).length).toBe(0);
    expect((await sup.queue.list({ status: 'CLAIMED' })).length).toBe(0);
    // the database says so while the supervisor runs (a dashboard may be elsewhere), and forgets it when it exits
    const recorded = await waitFor(
      'the crash loop recorded',
      async () => (await sup.queue.store.classDisabledList({ liveSince: 0 }))[0],
    );
    expect(recorded).toEqual({
      class: 'crashy',
      supervisor_id: await sup.supervisorId(),
      host: expect.any(String),
      reason: 'crash loop: 3 crashes within 60s',
      disabled_at: expect.any(Number),
    });
    await sup.stop();
    expect(disabledRows(sup.database)).toEqual([]);
  });

  it('a class whose handler file went missing is reported (CLASS_DISABLED) and consumes no jobs; the other class works', async () => {
    const dir = newDir();
    const handler = path.join(dir, 'no-such-handler.mjs');
    copyFileSync(fixture('succeed'), handler);
    const sup = await startSupervisor({
      dir,
      classes: [
        { name: 'ghost', handler },
        { name: 'ok', handler: 'succeed' },
      ],
    });
    await loseHandler(sup, 'ghost', handler);
    const disabled = await sup.waitForEvent('CLASS_DISABLED', { class: 'ghost' });
    expect(JSON.stringify(disabled)).toContain('no-such-handler.mjs');

    const ghost = await sup.queue.enqueue({ class: 'ghost', payload: {} });
    const ok = await sup.queue.enqueue({ class: 'ok', payload: {} });
    await sup.waitForJob(ok.id, 'SUCCEEDED');
    // by the time a later job of the working class has run, the ghost job is still untouched
    const later = await sup.queue.enqueue({ class: 'ok', payload: {} });
    await sup.waitForJob(later.id, 'SUCCEEDED');
    const untouched = await sup.queue.get(ghost.id);
    expect(untouched?.job.status).toBe('QUEUED');
    expect(untouched?.job.attempts).toBe(0);
    expect(await sup.children('ghost')).toEqual([]);
    expect(sup.events('CRASH_LOOP', { class: 'ghost' })).toEqual([]);
    const recorded = await waitFor(
      'the class recorded as disabled',
      async () => (await sup.queue.store.classDisabledList({ liveSince: 0 }))[0],
    );
    expect(recorded).toMatchObject({ class: 'ghost', supervisor_id: await sup.supervisorId() });
    expect(recorded.reason).toContain('no-such-handler.mjs');
    await sup.stop();
  });

  it('the record of a class disabled by a supervisor that was SIGKILLed goes when the next supervisor starts on its host', async () => {
    const dir = newDir();
    const handler = path.join(dir, 'no-such-handler.mjs');
    copyFileSync(fixture('succeed'), handler);
    const sup = await startSupervisor({ dir, classes: [{ name: 'ghost', handler }] });
    await loseHandler(sup, 'ghost', handler);
    await waitFor('the class recorded as disabled', async () => disabledRows(sup.database).length === 1);
    sup.kill('SIGKILL');
    expect(await sup.waitForExit(5_000)).not.toBeNull();
    const next = await startSupervisor({ dir, classes: [{ name: 'ok', handler: 'succeed' }] });
    expect(disabledRows(next.database)).toEqual([]);
    expect(await next.stop()).toBe(0);
  });
});

describe('config checking', () => {
  it('--check-config: 0 for a good file, 2 with the file and field path for a bad one; a bad file starts nothing', async () => {
    const dir = newDir();
    const good = path.join(dir, 'good.yaml');
    writeFileSync(good, `database: ./q.db\nclasses:\n  - name: ok\n    handler: ${fixture('succeed')}\n`);
    const checked = await execa('node', [SUPERVISE_BIN, '--check-config', '--config', good], { reject: false });
    expect(checked.exitCode).toBe(0);

    const bad = path.join(dir, 'bad.yaml');
    writeFileSync(
      bad,
      `database: ./q.db\nclasses:\n  - name: ok\n    handler: ${fixture('succeed')}\n  - name: two\n    handler: ${fixture('succeed')}\n    lease_seconds: abc\n`,
    );
    for (const args of [
      ['--check-config', '--config', bad],
      ['--config', bad],
    ]) {
      const result = await execa('node', [SUPERVISE_BIN, ...args], { reject: false, timeout: 15_000 });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(bad);
      expect(result.stderr).toContain('classes[1].lease_seconds');
    }
  });
});
