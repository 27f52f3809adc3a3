/**
 * Flows on real supervisors and children, both drivers: a fan-out of three
 * with a fan-in whose parent's child is SIGKILLed mid-run runs the fan-in
 * once, after every parent succeeded; a parent failing for good cancels the
 * chain below it. (Parents ending together: parents-together.test.ts.)
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { marksIn } from '../helpers/marks.js';

useProcessGuard();
const schemas = schemaPool('lh_flows');
const newDir = tempDir('leasehold-flows-');
afterAll(schemas.dropAll);

const DRIVERS = ['sqlite', 'postgres'] as const;
const databaseOf = (driver: (typeof DRIVERS)[number], dir: string) =>
  driver === 'sqlite' ? path.join(dir, 'queue.db') : pgUrl(schemas.next());

describe.each(DRIVERS)('flows through supervise on %s', (driver) => {
  it('a fan-out of three with a fan-in: a parent child SIGKILLed mid-run, the fan-in runs once, after it', async () => {
    const dir = newDir();
    const [effectsFile, markFile] = [path.join(dir, 'effects.jsonl'), path.join(dir, 'marks.jsonl')];
    const supervisor = await startSupervisor({
      dir,
      database: databaseOf(driver, dir),
      classes: [
        { name: 'part', handler: 'effects', processes: 3, max_retries: 3 },
        { name: 'join', handler: 'fan-in' },
      ],
    });
    const { queue } = supervisor;
    const jobs = await queue.enqueueMany([
      ...['a', 'b', 'c'].map((ref) => ({ class: 'part', ref, payload: { ms: 1_500, effectsFile } })),
      { class: 'join', dependsOn: ['a', 'b', 'c'], payload: { markFile } },
    ]);
    const parents = jobs.slice(0, 3).map((job) => job.id);
    const join = jobs[3]!.id;
    expect((await queue.get(join))?.job.status).toBe('WAITING');

    const victim = await waitFor('a parent running', async () => (await queue.list({ status: 'RUNNING' }))[0]);
    const child = (await supervisor.children('part')).find((c) => c.id === victim.owner_id);
    expect(child, `the child holding job ${victim.id}`).toBeDefined();
    process.kill(child!.pid, 'SIGKILL');

    const joined = await supervisor.waitForJob(join, 'SUCCEEDED', 60_000);
    const finished = await Promise.all(parents.map(async (id) => (await queue.get(id))!));
    expect(finished.map((p) => p.job.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    const killed = finished.find((p) => p.job.id === victim.id)!;
    expect(killed.attempts.map((a) => a.status)).toEqual(['FAILED', 'SUCCEEDED']);

    const marks = marksIn(markFile);
    expect(marks.map((m) => m.id)).toEqual([join]);
    expect(joined.attempts).toHaveLength(1);
    expect(marks[0]!.ts).toBeGreaterThanOrEqual(Math.max(...finished.map((p) => p.job.finished_at!)));
    expect(marks[0]!.parents!.map((p) => [p.id, p.status])).toEqual(parents.map((id) => [id, 'SUCCEEDED']));
    expect(joined.events.filter((e) => e.event === 'DEPENDENCIES_MET')).toHaveLength(1);
    expect(await supervisor.stop()).toBe(0);
  });

  it('a parent that fails for good cancels a chain of three, with the reason on each', async () => {
    const dir = newDir();
    const supervisor = await startSupervisor({
      dir,
      database: databaseOf(driver, dir),
      classes: [{ name: 'step', handler: 'non-retryable' }],
    });
    const [root, ...chain] = await supervisor.queue.enqueueMany([
      { class: 'step', ref: '0' },
      { class: 'step', ref: '1', dependsOn: ['0'] },
      { class: 'step', ref: '2', dependsOn: ['1'] },
      { class: 'step', dependsOn: ['2'] },
    ]);
    await supervisor.waitForJob(root!.id, 'FAILED');
    const ended = await Promise.all(chain.map((job) => supervisor.waitForJob(job.id, 'CANCELLED')));
    expect(ended.map((d) => [d.job.error_code, d.attempts.length])).toEqual([
      ['DEPENDENCY:FAILED', 0],
      ['DEPENDENCY:CANCELLED', 0],
      ['DEPENDENCY:CANCELLED', 0],
    ]);
    const parentsNamed = ended.map((d) => JSON.parse(d.events.find((e) => e.event === 'CANCELLED')!.detail!).parent);
    expect(parentsNamed).toEqual([root!.id, chain[0]!.id, chain[1]!.id]);
    expect(await supervisor.stop()).toBe(0);
  });
});
