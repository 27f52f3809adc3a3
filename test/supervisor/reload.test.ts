/**
 * A live reload (SIGHUP, `leasehold reload`): scaling while jobs run, classes
 * added and removed, limits that reach the children by replacing them one at
 * a time, a log level that reaches the children, and bad or refused configs
 * that leave everything as it was.
 */
import { execa } from 'execa';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { fixture, startSupervisor, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-reload-');
const CLI = fileURLToPath(new URL('../../dist/cli/leasehold.js', import.meta.url));

interface YamlClass {
  name: string;
  [field: string]: unknown;
}

/** Edit the supervisor's queue.yaml in place, as an operator would. */
function editConfig(
  sup: SupervisorHandle,
  edit: (config: { classes: YamlClass[]; [field: string]: unknown }) => void,
): void {
  const config = parse(readFileSync(sup.configFile, 'utf8')) as { classes: YamlClass[] };
  edit(config);
  writeFileSync(sup.configFile, stringify(config));
}

function classOf(config: { classes: YamlClass[] }, name: string): YamlClass {
  const found = config.classes.find((cls) => cls.name === name);
  if (found === undefined) throw new Error(`no class ${name} in the config`);
  return found;
}

/** SIGHUP, then the reload's verdict: the n-th CONFIG_RELOADED or CONFIG_RELOAD_REJECTED line of this supervisor. */
async function reload(
  sup: SupervisorHandle,
  nth: number,
): Promise<{ event: string; changes?: string[]; reasons?: string[] }> {
  sup.kill('SIGHUP');
  return waitFor(`reload verdict #${nth}`, () => {
    const verdicts = sup
      .logEvents()
      .filter((r) => r.event === 'CONFIG_RELOADED' || r.event === 'CONFIG_RELOAD_REJECTED');
    return verdicts[nth - 1] as { event: string; changes?: string[]; reasons?: string[] } | undefined;
  });
}

async function succeededCount(sup: SupervisorHandle): Promise<number> {
  return (await sup.queue.list({ status: 'SUCCEEDED', limit: 10_000 })).length;
}

describe('reload: scale a class up and down while jobs run', () => {
  it('1 → 3 → 1 processes over 500 jobs: each SUCCEEDED once, no attempt spent on the reload', async () => {
    const dir = newDir();
    const sup = await startSupervisor({
      dir,
      classes: [{ name: 'work', handler: 'sleep', processes: 1, max_retries: 0 }],
    });
    const jobs = await sup.queue.enqueueMany(
      Array.from({ length: 500 }, () => ({ class: 'work', payload: { ms: 15 } })),
    );
    await waitFor('50 jobs done', async () => (await succeededCount(sup)) >= 50, { timeoutMs: 30_000 });

    editConfig(sup, (config) => void (classOf(config, 'work').processes = 3));
    expect(await reload(sup, 1)).toMatchObject({
      event: 'CONFIG_RELOADED',
      changes: ['classes.work.processes: 1 → 3'],
    });
    await sup.waitForChildren('work', 3);
    const doneAtPeak = await succeededCount(sup);
    expect(doneAtPeak, 'the scale-up came before the work ran out').toBeLessThan(500);

    editConfig(sup, (config) => void (classOf(config, 'work').processes = 1));
    expect(await reload(sup, 2)).toMatchObject({
      event: 'CONFIG_RELOADED',
      changes: ['classes.work.processes: 3 → 1'],
    });
    await waitFor(
      'one child of work left',
      async () => ((await sup.children('work')).length === 1 ? true : undefined),
      { timeoutMs: 20_000 },
    );
    expect(await succeededCount(sup), 'the scale-down came before the work ran out').toBeLessThan(500);

    await waitFor('all 500 jobs SUCCEEDED', async () => (await succeededCount(sup)) === 500, { timeoutMs: 60_000 });
    for (const { id } of jobs) {
      const details = await sup.queue.get(id);
      // A claim handed back by a draining child ends LEASE:RELEASED and spends nothing; anything else would be an attempt lost.
      const spent = details?.attempts.filter((a) => a.error_code !== 'LEASE:RELEASED') ?? [];
      expect(
        spent.map((a) => a.status),
        `job ${id}`,
      ).toEqual(['SUCCEEDED']);
    }
    expect(sup.events('CHILD_KILLED')).toEqual([]);
    expect(sup.events('JOB_RECOVERED')).toEqual([]);
    expect(await sup.allChildren('work')).toHaveLength(3);
    expect(await sup.stop()).toBe(0);
  });
});

describe('reload: a config that cannot be applied', () => {
  it('a bad file is rejected with the start-up message; every child keeps its pid and keeps working', async () => {
    const dir = newDir();
    const sup = await startSupervisor({ dir, classes: [{ name: 'work', handler: 'succeed', processes: 2 }] });
    const before = (await sup.children('work')).map((c) => c.pid).sort();

    editConfig(sup, (config) => void (classOf(config, 'work').lease_seconds = 'abc'));
    const verdict = await reload(sup, 1);
    expect(verdict.event).toBe('CONFIG_RELOAD_REJECTED');
    expect(verdict.reasons?.join(' ')).toContain('classes[0].lease_seconds: expected a number > 0');

    editConfig(sup, (config) => {
      config.database = path.join(dir, 'other.db');
      classOf(config, 'work').lease_seconds = 2;
      classOf(config, 'work').processes = 4;
    });
    const refused = await reload(sup, 2);
    expect(refused.event).toBe('CONFIG_RELOAD_REJECTED');
    expect(refused.reasons?.join(' ')).toMatch(/^database cannot change without a restart/);

    const { id } = await sup.queue.enqueue({ class: 'work', payload: {} });
    await sup.waitForJob(id, 'SUCCEEDED');
    expect((await sup.children('work')).map((c) => c.pid).sort()).toEqual(before);
    expect(sup.events('CHILD_SPAWNED')).toHaveLength(2);
    expect(await sup.stop()).toBe(0);
  });
});

describe('reload: classes come and go', () => {
  it('an added class starts and runs jobs; a removed one drains (its running job finishes) and its children leave for good', async () => {
    const dir = newDir();
    const sup = await startSupervisor({ dir, classes: [{ name: 'old', handler: 'sleep', processes: 1 }] });
    const { id: draining } = await sup.queue.enqueue({ class: 'old', payload: { ms: 1500 } });
    await sup.waitForJob(draining, 'RUNNING');

    editConfig(sup, (config) => {
      const old = classOf(config, 'old');
      config.classes = [{ ...old, name: 'new', handler: fixture('succeed') }];
    });
    const verdict = await reload(sup, 1);
    expect(verdict).toMatchObject({ event: 'CONFIG_RELOADED' });
    expect(verdict.changes).toEqual(expect.arrayContaining(['classes.old: removed', 'classes.new: added']));

    await sup.waitForChildren('new', 1);
    const { id: fresh } = await sup.queue.enqueue({ class: 'new', payload: {} });
    await sup.waitForJob(fresh, 'SUCCEEDED');
    const finished = await sup.waitForJob(draining, 'SUCCEEDED');
    expect(finished.attempts.map((a) => a.status)).toEqual(['SUCCEEDED']);
    await waitFor('the old class has no child', async () =>
      (await sup.children('old')).length === 0 ? true : undefined,
    );
    // The supervisor records the exit in the workers table before it logs CHILD_EXITED: the line may not be written yet.
    await sup.waitForEvent('CHILD_EXITED', { class: 'old' });
    expect(sup.events('CHILD_EXITED', { class: 'old', exit_code: 0 })).toHaveLength(1);

    const { id: orphan } = await sup.queue.enqueue({ class: 'old', payload: { ms: 1 } });
    expect((await sup.queue.get(orphan))?.job.status).toBe('QUEUED');
    expect(sup.events('CHILD_SPAWNED', { class: 'old' })).toHaveLength(1);
    expect(await sup.stop()).toBe(0);
  });
});

describe('reload: changed limits reach the children', () => {
  it('children are replaced one at a time and the new max_runtime_seconds holds', async () => {
    const dir = newDir();
    const sup = await startSupervisor({
      dir,
      classes: [{ name: 'work', handler: 'sleep', processes: 2, max_runtime_seconds: 20 }],
    });
    const before = (await sup.children('work')).map((c) => c.pid);

    editConfig(sup, (config) => void (classOf(config, 'work').max_runtime_seconds = 1));
    expect(await reload(sup, 1)).toMatchObject({
      event: 'CONFIG_RELOADED',
      changes: ['classes.work.max_runtime_seconds: 20 → 1'],
    });
    const replacements = await waitFor('two replacements ready', async () => {
      const ready = (await sup.children('work')).filter(
        (c) => !before.includes(c.pid) && (c.state === 'ready' || c.state === 'busy'),
      );
      return ready.length === 2 ? ready : undefined;
    });
    expect(replacements).toHaveLength(2);

    // One at a time: the second child was asked to leave only after the first one's replacement was ready.
    const log = sup.logEvents();
    const replaced = log.filter((r) => r.event === 'CHILD_REPLACED');
    expect(replaced.map((r) => r.pid).sort()).toEqual([...before].sort());
    const firstReady = log.findIndex((r, i) => i > log.indexOf(replaced[0]!) && r.event === 'CHILD_READY');
    expect(firstReady).toBeGreaterThan(-1);
    expect(log.indexOf(replaced[1]!)).toBeGreaterThan(firstReady);

    const { id } = await sup.queue.enqueue({ class: 'work', payload: { ms: 10_000 }, maxRetries: 0 });
    const timedOut = await sup.waitForJob(id, 'FAILED');
    expect(timedOut.job.error_code).toBe('TIMEOUT:MAX_RUNTIME');
    expect(await sup.stop()).toBe(0);
  });
});

describe('reload: a class disabled by its config', () => {
  it('comes back once a reload fixes its handler (CLASS_ENABLED) and runs its jobs', async () => {
    const dir = newDir();
    // Start-up refuses a handler that cannot load, so the class is disabled the other way: its file goes away, then its child dies.
    const handler = path.join(dir, 'handler.mjs');
    copyFileSync(fixture('succeed'), handler);
    const sup = await startSupervisor({ dir, classes: [{ name: 'work', handler }] });
    const [child] = await sup.children('work');
    rmSync(handler);
    process.kill(child!.pid, 'SIGKILL');
    await sup.waitForEvent('CLASS_DISABLED');
    const { id } = await sup.queue.enqueue({ class: 'work', payload: {} });
    await waitFor(
      'the class recorded as disabled',
      async () => (await sup.queue.store.classDisabledList({ liveSince: 0 })).length === 1,
    );

    editConfig(sup, (config) => void (classOf(config, 'work').handler = fixture('succeed')));
    expect(await reload(sup, 1)).toMatchObject({ event: 'CONFIG_RELOADED' });
    await sup.waitForEvent('CLASS_ENABLED', { class: 'work' });
    await sup.waitForJob(id, 'SUCCEEDED');
    // enabled again: the record is gone while the supervisor still runs
    expect(await sup.queue.store.classDisabledList({ liveSince: 0 })).toEqual([]);
    expect(await sup.stop()).toBe(0);
  });
});

describe('reload: schedules', () => {
  it('a schedule added by a reload starts enqueuing, without replacing the children', async () => {
    const dir = newDir();
    const sup = await startSupervisor({ dir, classes: [{ name: 'work', handler: 'succeed', processes: 1 }] });
    const [child] = await sup.children('work');

    editConfig(sup, (config) => void (classOf(config, 'work').schedules = [{ name: 'tick', cron: '* * * * * *' }]));
    expect(await reload(sup, 1)).toMatchObject({ event: 'CONFIG_RELOADED' });
    const enqueued = await sup.waitForEvent('SCHEDULE_ENQUEUED', { class: 'work' });
    await sup.waitForJob(enqueued.job_id as number, 'SUCCEEDED');
    expect((await sup.children('work')).map((c) => c.pid)).toEqual([child!.pid]);
    expect(sup.events('CHILD_REPLACED')).toEqual([]);
    expect(await sup.stop()).toBe(0);
  });
});

describe('reload: the log level', () => {
  it('debug reaches the running children: their successes are logged one by one again (JOB_SUCCEEDED), without replacing them', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ name: 'work', handler: 'succeed', processes: 1 }],
      logLevel: 'info',
    });
    const [child] = await sup.children('work');
    const before = await sup.queue.enqueue({ class: 'work', payload: {} });
    await sup.waitForJob(before.id, 'SUCCEEDED');

    editConfig(sup, (config) => void ((config.log as { level: string }).level = 'debug'));
    expect(await reload(sup, 1)).toMatchObject({ event: 'CONFIG_RELOADED' });
    const after = await sup.queue.enqueue({ class: 'work', payload: {} });
    await sup.waitForEvent('JOB_SUCCEEDED', { job_id: after.id });
    expect(sup.events('JOB_SUCCEEDED', { job_id: before.id })).toEqual([]);
    expect((await sup.children('work')).map((c) => c.pid)).toEqual([child!.pid]);
    expect(await sup.stop()).toBe(0);
  });
});

describe('leasehold reload', () => {
  it('signals the supervisor of this host, and refuses (exit 2, one line) when none runs or the file is bad', async () => {
    const dir = newDir();
    const sup = await startSupervisor({ dir, classes: [{ name: 'work', handler: 'succeed', processes: 1 }] });
    const env = { ...process.env, LEASEHOLD_HOST: undefined };

    editConfig(sup, (config) => void (classOf(config, 'work').processes = 2));
    const ok = await execa('node', [CLI, '--config', sup.configFile, '--json', 'reload'], { reject: false, env });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ signalled: [{ pid: sup.pid }] });
    await sup.waitForChildren('work', 2);
    expect(sup.events('CONFIG_RELOADED')).toHaveLength(1);

    editConfig(sup, (config) => void (classOf(config, 'work').processes = 0));
    const bad = await execa('node', [CLI, '--config', sup.configFile, 'reload'], { reject: false, env });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain('classes[0].processes');

    expect(await sup.stop()).toBe(0);
    editConfig(sup, (config) => void (classOf(config, 'work').processes = 1));
    const none = await execa('node', [CLI, '--config', sup.configFile, 'reload'], { reject: false, env });
    expect(none.exitCode).toBe(2);
    expect(none.stderr.trim().split('\n')).toHaveLength(1);
    expect(none.stderr).toMatch(/no supervisor of host ".+" is running/);
    expect(sup.events('CONFIG_RELOAD_REJECTED')).toEqual([]);
  });
});
