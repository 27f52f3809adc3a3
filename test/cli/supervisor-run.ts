/**
 * The database a real supervisor run produces for the CLI tests: every way
 * of enqueueing through the binary, then a supervisor that works the queue
 * (ok jobs succeed, fail jobs fail, a hang job keeps running) and the live
 * reads of `stats` and `workers` taken while it ran.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { copyDatabase, fixture, leasehold, leaseholdJson, SupervisorRun, writeConfig } from './helpers.js';
import type { JobJson, StatsJson, WorkersJson } from './json-shapes.js';

export const newDir = tempDir('leasehold-cli-');

/** Everything the supervisor run produced, for the tests to look at. */
export const run = {
  dir: '',
  configFile: '',
  database: '',
  ids: { ok: [] as number[], fail: [] as number[], hang: 0, delayed: 0, keyed: 0, stdin: 0, bulk: [] as number[] },
  outputs: {} as Record<string, string>,
  migrate: {} as Record<string, unknown>,
  live: {
    workers: undefined as unknown as WorkersJson,
    workersText: '',
    stats: undefined as unknown as StatsJson,
    statsText: '',
    /** Read again once the heartbeats had moved on. */
    workersLater: undefined as unknown as WorkersJson,
    statsLater: undefined as unknown as StatsJson,
  },
  supervisorPid: 0,
};

export const C = () => ['--config', run.configFile];
/** A fresh copy of the run's database: the config's classes, and --db pointing at the copy. */
export const fresh = () => {
  const copy = copyDatabase(run.database, join(newDir(), 'copy.db'));
  return { db: copy, args: ['--config', run.configFile, '--db', copy] };
};

/** When the hang job's holder last renewed its lease, as stats reports it. */
export const hangHeartbeat = (stats: StatsJson) => stats.in_flight.find((job) => job.id === run.ids.hang)?.heartbeat_at;
/** Each child's last heartbeat, by worker id. */
export const childHeartbeats = (workers: WorkersJson) =>
  new Map(workers.workers.filter((w) => w.kind === 'child').map((w) => [w.id, w.heartbeat_at]));

async function jobsById(args: string[]): Promise<Map<number, JobJson>> {
  const { jobs } = await leaseholdJson<{ jobs: JobJson[] }>([...args, 'list', '--limit', '1000']);
  return new Map(jobs.map((job) => [job.id, job]));
}

function enqueuedId(stdout: string): number {
  const match = /^enqueued job (\d+) \(\w+\)$/.exec(stdout.trim());
  if (match === null) throw new Error(`unexpected enqueue output: ${stdout}`);
  return Number(match[1]);
}

/** Enqueue every way, run a supervisor over the queue, and read it live; fills `run`. */
export async function produceSupervisorRun(): Promise<void> {
  run.dir = newDir();
  run.database = join(run.dir, 'queue.db');
  const logFile = join(run.dir, 'supervisor.log');
  run.configFile = writeConfig(join(run.dir, 'queue.yaml'), {
    database: run.database,
    logFile,
    shutdown_grace_seconds: 1,
    classes: [
      { name: 'ok', handler: fixture('ok') },
      { name: 'fail', handler: fixture('fail'), max_retries: 1 },
      { name: 'hang', handler: fixture('hang') },
    ],
  });

  // Producers: every way of enqueueing, through the binary.
  run.migrate = await leaseholdJson([...C(), 'migrate']);
  run.ids.ok.push((await leaseholdJson<{ id: number }>([...C(), 'enqueue', 'ok', '--payload', '{"to":"a@b"}'])).id);
  const keyed = await leasehold([...C(), 'enqueue', 'ok', '--payload', '{"n":2}', '--key', 'k-2', '--priority', '5']);
  run.outputs.enqueueText = keyed.stdout;
  run.outputs.enqueueTextErr = keyed.stderr;
  run.ids.keyed = enqueuedId(keyed.stdout);
  run.outputs.enqueueAgain = (
    await leasehold([...C(), 'enqueue', 'ok', '--payload', '{"n":3}', '--key', 'k-2'])
  ).stdout;
  run.ids.stdin = enqueuedId((await leasehold([...C(), 'enqueue', 'ok', '-'], { input: '{"from":"stdin"}' })).stdout);
  for (let i = 0; i < 2; i++)
    run.ids.fail.push((await leaseholdJson<{ id: number }>([...C(), 'enqueue', 'fail', '--payload', `{"i":${i}}`])).id);
  run.ids.hang = (await leaseholdJson<{ id: number }>([...C(), 'enqueue', 'hang'])).id;
  run.ids.delayed = (
    await leaseholdJson<{ id: number }>([...C(), 'enqueue', 'ok', '--delay', '3600', '--max-retries', '2'])
  ).id;
  const bulkFile = join(run.dir, 'jobs.jsonl');
  writeFileSync(
    bulkFile,
    [1, 2, 3].map((n) => JSON.stringify({ class: 'ok', payload: { n }, priority: n })).join('\n') + '\n',
  );
  const bulk = await leaseholdJson<{ count: number; ids: number[] }>([...C(), 'enqueue', '--file', bulkFile]);
  run.outputs.bulkJson = JSON.stringify(bulk);
  run.ids.bulk = bulk.ids;
  const bulkFile2 = join(run.dir, 'jobs2.jsonl');
  writeFileSync(bulkFile2, `${JSON.stringify({ class: 'ok', payload: { n: 4 } })}\n`);
  const bulk2 = await leasehold([...C(), 'enqueue', '--file', bulkFile2]);
  run.outputs.bulkText = bulk2.stdout;
  run.outputs.bulkTextErr = bulk2.stderr;
  const newest = await leaseholdJson<{ jobs: JobJson[] }>([...C(), 'list', '--limit', '1']);
  run.ids.ok.push(run.ids.keyed, run.ids.stdin, ...run.ids.bulk, newest.jobs[0]!.id);

  // A real supervisor works the queue.
  const sup = await SupervisorRun.start(run.configFile, logFile);
  run.supervisorPid = sup.pid;
  await waitFor(
    'ok jobs SUCCEEDED, fail jobs FAILED, the hang job RUNNING',
    async () => {
      const jobs = await jobsById(C());
      return (
        run.ids.ok.every((id) => jobs.get(id)?.status === 'SUCCEEDED') &&
        run.ids.fail.every((id) => jobs.get(id)?.status === 'FAILED') &&
        jobs.get(run.ids.hang)?.status === 'RUNNING'
      );
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  // The health watch records the job each child runs, and its memory.
  run.live.workers = await waitFor(
    'the hang child in the registry with its job and memory',
    async () => {
      const workers = await leaseholdJson<WorkersJson>([...C(), 'workers']);
      const hang = workers.workers.find((w) => w.class === 'hang');
      return hang?.job_id === run.ids.hang && hang.memory_bytes !== null ? workers : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 200 },
  );
  run.live.workersText = (await leasehold([...C(), 'workers'])).stdout;
  run.live.stats = await leaseholdJson<StatsJson>([...C(), 'stats']);
  run.live.statsText = (await leasehold([...C(), 'stats'])).stdout;
  // Fresh means moving: read again until each heartbeat changed; the tests check which way.
  run.live.statsLater = await waitFor(
    "the hang job's heartbeat to change",
    async () => {
      const later = await leaseholdJson<StatsJson>([...C(), 'stats']);
      return hangHeartbeat(later) !== hangHeartbeat(run.live.stats) ? later : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 200 },
  );
  run.live.workersLater = await waitFor(
    "every child's heartbeat to change",
    async () => {
      const later = await leaseholdJson<WorkersJson>([...C(), 'workers']);
      const beats = childHeartbeats(later);
      return [...childHeartbeats(run.live.workers)].every(([id, at]) => ![undefined, at].includes(beats.get(id)))
        ? later
        : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 200 },
  );
  expect(await sup.stop()).toBe(0);
}
