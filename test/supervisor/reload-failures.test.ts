/**
 * A reload that cannot be applied never takes a class down: a handler that
 * cannot load is refused before any child is touched, a replacement that
 * cannot start stops the rolling replacement with the old children serving,
 * and a config that names another database is refused naming both. Jobs flow
 * all along: none lost, none run twice, the original pids live on.
 */
import { execa } from 'execa';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { fixture, startSupervisor, type LogRecord, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-reload-fail-');
const CLI = fileURLToPath(new URL('../../dist/cli/leasehold.js', import.meta.url));
const VERDICTS = ['CONFIG_RELOADED', 'CONFIG_RELOAD_REJECTED', 'CONFIG_RELOAD_FAILED'];

/** Edit the supervisor's queue.yaml in place, as an operator would: one class, `work`. */
function editWork(
  sup: SupervisorHandle,
  edit: (work: Record<string, unknown>, config: Record<string, unknown>) => void,
): void {
  const config = parse(readFileSync(sup.configFile, 'utf8')) as { classes: Record<string, unknown>[] };
  edit(config.classes[0]!, config);
  writeFileSync(sup.configFile, stringify(config));
}

/** SIGHUP, then the n-th reload verdict of this supervisor. */
async function sighup(sup: SupervisorHandle, nth: number): Promise<LogRecord> {
  sup.kill('SIGHUP');
  return waitFor(
    `reload verdict #${nth}`,
    () => sup.logEvents().filter((r) => VERDICTS.includes(r.event as string))[nth - 1],
  );
}

function leasehold(sup: SupervisorHandle, ...args: string[]) {
  return execa('node', [CLI, '--config', sup.configFile, ...args], {
    reject: false,
    timeout: 60_000,
    env: { ...process.env, LEASEHOLD_HOST: undefined },
  });
}

/** Enqueue a few jobs every few ms until stopped: the steady stream a reload must not interrupt. */
function jobStream(sup: SupervisorHandle, markFile: string): { stop: () => Promise<number[]> } {
  const ids: number[] = [];
  let stopped = false;
  // A test that fails midway closes the queue under the loop: the loop ends, and its error is kept for stop(), not left unhandled.
  const producing = (async () => {
    while (!stopped) {
      const jobs = await sup.queue.enqueueMany(
        Array.from({ length: 5 }, () => ({ class: 'work', payload: { markFile } })),
      );
      ids.push(...jobs.map((job) => job.id));
      await sleep(20);
    }
  })().catch((error: unknown) => error);
  return {
    stop: async () => {
      stopped = true;
      const failure = await producing;
      if (failure !== undefined) throw failure;
      return ids;
    },
  };
}

/** Every job SUCCEEDED, ran exactly once (its handler's own record), and no attempt was spent on a reload. */
async function expectEachRanOnce(sup: SupervisorHandle, ids: number[], markFile: string): Promise<void> {
  await waitFor(
    `all ${ids.length} jobs SUCCEEDED`,
    async () => (await sup.queue.list({ status: 'SUCCEEDED', limit: 100_000 })).length === ids.length,
    { timeoutMs: 60_000 },
  );
  const runs = new Map<number, number>();
  for (const line of readFileSync(markFile, 'utf8').trim().split('\n')) {
    const { id } = JSON.parse(line) as { id: number };
    runs.set(id, (runs.get(id) ?? 0) + 1);
  }
  expect(
    ids.filter((id) => runs.get(id) !== 1),
    'jobs that did not run exactly once',
  ).toEqual([]);
  for (const id of ids) {
    const spent = (await sup.queue.get(id))?.attempts.filter((a) => a.error_code !== 'LEASE:RELEASED') ?? [];
    expect(
      spent.map((a) => a.status),
      `job ${id}`,
    ).toEqual(['SUCCEEDED']);
  }
}

/** A supervisor whose class `work` (`processes` children) serves a steady stream of jobs; `drained()` ends the stream and checks that each job ran once. */
async function serving(processes: number) {
  const dir = newDir();
  const markFile = path.join(dir, 'runs.jsonl');
  const sup = await startSupervisor({ dir, classes: [{ name: 'work', handler: 'succeed', processes }] });
  const original = (await sup.children('work')).map((c) => c.pid).sort();
  const stream = jobStream(sup, markFile);
  await waitFor('jobs flowing', async () => (await sup.queue.list({ status: 'SUCCEEDED', limit: 10 })).length >= 10);
  return { dir, sup, original, drained: async () => expectEachRanOnce(sup, await stream.stop(), markFile) };
}

describe('reload: a handler path with a typo', () => {
  it('is refused before any child is touched; fixing it and reloading replaces the children as usual', async () => {
    const { dir, sup, original, drained } = await serving(3);

    const typo = path.join(dir, 'handlers', 'succed.mjs');
    editWork(sup, (work) => void (work.handler = typo));
    const cli = await leasehold(sup, 'reload');
    expect(cli.exitCode).toBe(2);
    expect(cli.stderr.trim().split('\n')).toEqual([
      `leasehold: ${sup.configFile}: classes[0].handler: class work: no such file ${typo}`,
    ]);

    const failed = await sighup(sup, 1);
    expect(failed).toMatchObject({
      event: 'CONFIG_RELOAD_FAILED',
      class: 'work',
      handler: typo,
      file: sup.configFile,
      error: `no such file ${typo}`,
    });
    expect(failed.msg).toContain('class work cannot start a child on its new config');
    await waitFor(
      'more jobs done after the bad reload',
      async () => (await sup.queue.list({ status: 'SUCCEEDED', limit: 100_000 })).length >= 100,
    );
    expect((await sup.children('work')).map((c) => c.pid).sort(), 'the original children serve on').toEqual(original);
    expect(sup.events('CHILD_REPLACED')).toEqual([]);
    expect(sup.events('CLASS_DISABLED')).toEqual([]);
    const { workers } = JSON.parse((await leasehold(sup, '--json', 'workers')).stdout) as {
      workers: { kind: string; pid: number; state: string }[];
    };
    const listed = workers.filter((w) => w.kind === 'child');
    expect(listed.map((c) => c.pid).sort(), 'leasehold workers shows the class on its old children').toEqual(original);
    expect(listed.every((c) => c.state === 'ready' || c.state === 'busy')).toBe(true);

    editWork(sup, (work) => void (work.handler = fixture('succeed')));
    const fixed = await leasehold(sup, 'reload');
    expect(fixed.exitCode, fixed.stderr).toBe(0);
    expect(fixed.stdout).toContain('config reloaded: nothing changed');
    editWork(sup, (work) => void (work.max_runtime_seconds = 29));
    const replaced = await leasehold(sup, 'reload');
    expect(replaced.exitCode, replaced.stderr).toBe(0);
    expect(replaced.stdout).toContain('config reloaded: classes.work.max_runtime_seconds: 20 → 29');
    const now = (await sup.children('work')).map((c) => c.pid);
    expect(
      now.filter((pid) => original.includes(pid)),
      'every child replaced',
    ).toEqual([]);

    await drained();
    expect(await sup.stop()).toBe(0);
  });
});

describe('reload: a replacement that cannot start', () => {
  it('stops the rolling replacement at once: the old children serve on untouched, the class stays enabled, leasehold reload exits 1', async () => {
    const { sup, original, drained } = await serving(2);
    // A failed replacement's row is marked exited by a write that takes its turn: it may land just after the verdict.
    const onlyOriginalChildrenListed = () =>
      waitFor('only the original children listed', async () => {
        const pids = (await sup.children('work')).map((c) => c.pid).sort();
        return pids.length === original.length && pids.every((pid, i) => pid === original[i]);
      });

    // It loads in the config check's probe, and only fails in a worker.
    editWork(sup, (work) => void (work.handler = fixture('worker-only-failure')));
    const failed = await sighup(sup, 1);
    expect(failed).toMatchObject({
      event: 'CONFIG_RELOAD_FAILED',
      class: 'work',
      handler: fixture('worker-only-failure'),
    });
    expect(failed.error).toMatch(
      /cannot load handler .*worker-only-failure\.mjs: this handler refuses to load in a worker/,
    );
    expect(sup.events('CHILD_REPLACED'), 'one replacement tried, then the roll stopped').toHaveLength(1);
    await onlyOriginalChildrenListed();
    expect(sup.events('CLASS_DISABLED')).toEqual([]);
    expect(await sup.queue.store.classDisabledList({ liveSince: 0 })).toEqual([]);

    const again = await leasehold(sup, 'reload');
    expect(again.exitCode).toBe(1);
    expect(again.stderr.trim().split('\n')).toEqual([`leasehold: ${failed.msg as string}`]);
    await onlyOriginalChildrenListed();

    editWork(sup, (work) => void (work.handler = fixture('succeed')));
    const back = await leasehold(sup, '--json', 'reload');
    expect(back.exitCode, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({
      signalled: [{ pid: sup.pid, verdict: { event: 'CONFIG_RELOADED' } }],
    });

    await drained();
    expect(await sup.stop()).toBe(0);
  });
});

describe('reload: the config names another database', () => {
  it('leasehold reload says so, naming both (exit 2); SIGHUP is refused naming both; the supervisor runs on', async () => {
    const dir = newDir();
    const sup = await startSupervisor({ dir, classes: [{ name: 'work', handler: 'succeed', processes: 1 }] });
    const database = path.join(dir, 'queue.db');
    const moved = path.join(dir, 'moved.db');
    editWork(sup, (_work, config) => void (config.database = moved));

    const cli = await leasehold(sup, 'reload');
    expect(cli.exitCode).toBe(2);
    expect(cli.stderr.trim().split('\n')).toEqual([
      `leasehold: ${sup.configFile}: database changed from ${database} to ${moved}: a reload cannot move a running supervisor (pid ${sup.pid}) to another database; restart it instead`,
    ]);

    const refused = await sighup(sup, 1);
    expect(refused.event).toBe('CONFIG_RELOAD_REJECTED');
    expect((refused.reasons as string[]).join(' ')).toContain(
      `the supervisor runs on ${database}, the file now names ${moved}`,
    );
    const { id } = await sup.queue.enqueue({ class: 'work', payload: {} });
    await sup.waitForJob(id, 'SUCCEEDED');
    expect(await sup.stop()).toBe(0);
  });
});
