/**
 * Cron schedules in real supervisors: two of them, with different host
 * identities, on one database run a schedule of every second; each
 * occurrence is enqueued once (by one of them, through the schedule's
 * compare-and-set, not by colliding on the idempotency key), with no second
 * missing while they ran. Then `leasehold schedules` shows the last run, and
 * a bad schedule stops `supervise` with exit 2 and one line, writing nothing.
 */
import { execa } from 'execa';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { leasehold } from '../cli/helpers.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { useProcessGuard } from '../helpers/processes.js';
import {
  fixture,
  startSupervisor,
  SUPERVISE_BIN,
  type ClassSpec,
  type SupervisorHandle,
} from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-schedules-');
const schemas = schemaPool('lh_sched');

const TICK: ClassSpec = {
  name: 'tick',
  handler: 'succeed',
  schedules: [{ name: 'every-second', cron: '* * * * * *' }],
};
const keyOf = (at: number) => `schedule:every-second@${new Date(at).toISOString()}`;

/** Both supervisors run until `occurrences` seconds came due while both were up; then both stop. */
async function twoHostsRun(database: string | undefined, occurrences: number) {
  const dir = newDir();
  const a = await startSupervisor({ dir, database, host: 'host-a', classes: [TICK] });
  const b = await startSupervisor({ dir, database, env: { LEASEHOLD_HOST: 'host-b' }, classes: [TICK] });
  const supervisors = [await a.supervisorId(), await b.supervisorId()];
  const bothFrom = Date.now();
  const store = a.queue.store;
  await waitFor(
    `${occurrences} occurrences while both supervisors ran`,
    async () =>
      (await store.jobList({ class: 'tick', limit: 10_000 })).filter((job) => job.run_at > bothFrom).length >=
      occurrences,
    {
      timeoutMs: occurrences * 1_000 + 30_000,
      intervalMs: 250,
    },
  );
  expect(await a.stop()).toBe(0);
  expect(await b.stop()).toBe(0);
  const jobs = (await store.jobList({ class: 'tick', limit: 10_000 })).sort((x, y) => x.run_at - y.run_at);
  return { a, b, supervisors, jobs };
}

/**
 * Each occurrence once, logged once by whichever supervisor won it, and every second from the schedule's start to
 * its last check: it started once, none was skipped, and its cursor stopped at the last one enqueued.
 */
async function expectEachOccurrenceOnce(run: Awaited<ReturnType<typeof twoHostsRun>>): Promise<void> {
  const { a, b, supervisors, jobs } = run;
  const times = jobs.map((job) => job.run_at);
  expect(jobs.map((job) => job.idempotency_key)).toEqual(times.map(keyOf));
  expect(new Set(times).size).toBe(times.length);
  for (const job of jobs) {
    const events = (await a.queue.store.eventList({ jobId: job.id })).filter((event) => event.event === 'ENQUEUED');
    expect(events, `job ${job.id}`).toHaveLength(1);
    expect(supervisors).toContain(events[0]!.actor);
  }
  const logged = [a, b].flatMap((sup: SupervisorHandle) =>
    sup.events('SCHEDULE_ENQUEUED').map((record) => record.occurrence as number),
  );
  expect(logged.sort((x, y) => x - y)).toEqual(times);
  expect([a, b].flatMap((sup) => sup.logEvents().filter((record) => record.msg.includes('already enqueued')))).toEqual(
    [],
  );
  // contiguous: no second missing between the first and the last
  expect(times.slice(1).map((at, i) => at - times[i]!)).toEqual(times.slice(1).map(() => 1_000));
  // the ends: every occurrence after the one start was enqueued or logged as skipped, and none was skipped
  expect([a, b].flatMap((sup) => sup.events('SCHEDULE_STARTED'))).toHaveLength(1);
  expect([a, b].flatMap((sup) => sup.events('SCHEDULE_SKIPPED'))).toEqual([]);
  expect(await a.queue.store.scheduleList()).toMatchObject([
    { class: 'tick', name: 'every-second', checked_through: times.at(-1), last_job_id: jobs.at(-1)!.id },
  ]);
}

describe('schedules across two hosts', () => {
  it(
    'SQLite: a schedule of every second for 20 s, two supervisors: each occurrence enqueued exactly once, none missed',
    { timeout: 120_000 },
    async () => {
      const run = await twoHostsRun(undefined, 20);
      await expectEachOccurrenceOnce(run);

      const shown = await leasehold(['--config', run.a.configFile, 'schedules', '--json']);
      expect(shown.exitCode, shown.stderr).toBe(0);
      const { now, schedules } = JSON.parse(shown.stdout) as { now: number; schedules: Record<string, unknown>[] };
      const last = run.jobs.at(-1)!;
      expect(schedules).toEqual([
        {
          class: 'tick',
          name: 'every-second',
          cron: '* * * * * *',
          timezone: 'UTC',
          catch_up: 'latest',
          priority: 0,
          payload: {},
          next_run_at: Math.floor(now / 1_000) * 1_000 + 1_000,
          last_run_at: last.run_at,
          last_job_id: last.id,
          checked_through: last.run_at,
        },
      ]);
      const text = await leasehold(['--config', run.a.configFile, 'schedules']);
      expect(text.stdout.split('\n')[0]).toMatch(
        /^CLASS\s+NAME\s+CRON\s+TIMEZONE\s+CATCH_UP\s+NEXT RUN\s+LAST RUN\s+LAST JOB$/,
      );
      expect(text.stdout).toContain(`tick   every-second  * * * * * *  UTC`);
    },
  );

  it('PostgreSQL: the same, for 8 s', { timeout: 120_000 }, async () => {
    await expectEachOccurrenceOnce(await twoHostsRun(pgUrl(schemas.next()), 8));
  });
});

describe('bad schedules', () => {
  const badConfig = (dir: string, schedule: Record<string, unknown>) => {
    const file = path.join(dir, 'queue.yaml');
    const classes = [
      { name: 'tick', handler: fixture('succeed'), schedules: [{ name: 'ok', cron: '0 * * * *' }, schedule] },
    ];
    writeFileSync(file, stringify({ database: './queue.db', classes }));
    return file;
  };

  it.each([
    [
      'a bad cron expression',
      { name: 'bad', cron: '61 * * * *' },
      'classes[0].schedules[1].cron: expected a cron expression, got "61 * * * *": Invalid value for minute: 61',
    ],
    [
      'an unknown time zone',
      { name: 'bad', cron: '0 9 * * *', timezone: 'Europe/Atlantis' },
      'classes[0].schedules[1].timezone: expected an IANA time zone such as "Europe/Berlin" or "UTC", got "Europe/Atlantis"',
    ],
  ])(
    '%s: supervise, --check-config and leasehold schedules exit 2 with one line naming the field, and create nothing',
    async (_what, schedule, problem) => {
      const dir = newDir();
      const file = badConfig(dir, schedule);
      for (const args of [
        ['--config', file],
        ['--config', file, '--check-config'],
      ]) {
        const result = await execa('node', [SUPERVISE_BIN, ...args], { reject: false, timeout: 30_000 });
        expect(result.exitCode, result.stdout).toBe(2);
        expect(result.stderr).toBe(`supervise: ${file}: ${problem}`);
      }
      const listed = await leasehold(['--config', file, 'schedules']);
      expect(listed.exitCode).toBe(2);
      expect(listed.stderr).toBe(`leasehold: ${file}: ${problem}`);
      expect(existsSync(path.join(dir, 'queue.db'))).toBe(false);
    },
  );

  it('leasehold schedules without --config exits 2 with one line', async () => {
    const result = await leasehold(['--db', path.join(newDir(), 'queue.db'), 'schedules']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe('leasehold: schedules needs --config queue.yaml (the schedules are defined there)');
  });
});
