/**
 * The `leasehold` binary, run as a user runs it, against a database produced
 * by a real supervisor run: each command's human output and its --json shape.
 * Commands that write work on a copy of that database.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import {
  copyDatabase,
  countRows,
  fingerprint,
  fixture,
  isAlive,
  killLeftovers,
  leasehold,
  leaseholdJson,
  SupervisorRun,
  writeConfig,
} from './helpers.js';
import { claimJobs, extendLease } from '../helpers/fenced-writes.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';

const LATEST_VERSION = SQLITE_MIGRATIONS[SQLITE_MIGRATIONS.length - 1]!.version;

const newDir = tempDir('leasehold-cli-');
const AGO = /\d+(ms|s|m\d\ds) ago/;

interface JobJson {
  id: number;
  class: string;
  status: string;
  attempts: number;
  payload: unknown;
  result: unknown;
  owner_id: string | null;
  error_code: string | null;
  [key: string]: unknown;
}
interface ShowJson {
  job: JobJson;
  attempts: { attempt: number; status: string; owner_id: string; error_code: string | null }[];
  events: { event: string; ts: number; actor: string; detail: unknown }[];
}
interface WorkerJson {
  id: string;
  kind: string;
  pid: number;
  class: string | null;
  state: string;
  stale: boolean;
  job_id: number | null;
  supervisor_id: string | null;
  exited_at: number | null;
  uptime_ms: number;
  heartbeat_at: number;
  heartbeat_age_ms: number;
  memory_bytes: number | null;
  restarts: number;
}
interface WorkersJson {
  now: number;
  stale_after_ms: number;
  workers: WorkerJson[];
}
type Counts = Record<'QUEUED' | 'CLAIMED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED' | 'total', number>;
interface StatsJson {
  now: number;
  window_ms: number;
  jobs: { by_class: (Counts & { class: string })[]; total: Counts };
  throughput: Record<'last_minute' | 'last_hour', { window_ms: number; SUCCEEDED: number; FAILED: number; CANCELLED: number; total: number; per_second: number }>;
  in_flight: {
    id: number;
    class: string;
    status: string;
    owner_id: string;
    pid: number | null;
    attempt: number;
    heartbeat_at: number;
    heartbeat_age_ms: number;
    lease_left_ms: number;
    runtime_ms: number | null;
    held_ms: number;
  }[];
  retries: { since: number; buckets: { class: string; status: string; attempts: number; jobs: number }[]; finished: number; retried: number };
  errors: { since: number; top: { code: string; count: number; last_at: number }[]; by_class: { class: string; code: string; count: number }[] };
  retention: { policy: Record<string, number>; would_delete: { status: string; older_than_days: number; finished_before: number; count: number }[]; total: number };
  database: { bytes: number; page_count: number; page_size: number; free_pages: number };
}

/** Everything the supervisor run produced, for the tests to look at. */
const run = {
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

const C = () => ['--config', run.configFile];
/** A fresh copy of the run's database: the config's classes, and --db pointing at the copy. */
const fresh = () => {
  const copy = copyDatabase(run.database, join(newDir(), 'copy.db'));
  return { db: copy, args: ['--config', run.configFile, '--db', copy] };
};

/** When the hang job's holder last renewed its lease, as stats reports it. */
const hangHeartbeat = (stats: StatsJson) => stats.in_flight.find((job) => job.id === run.ids.hang)?.heartbeat_at;
/** Each child's last heartbeat, by worker id. */
const childHeartbeats = (workers: WorkersJson) => new Map(workers.workers.filter((w) => w.kind === 'child').map((w) => [w.id, w.heartbeat_at]));

async function jobsById(args: string[]): Promise<Map<number, JobJson>> {
  const { jobs } = await leaseholdJson<{ jobs: JobJson[] }>([...args, 'list', '--limit', '1000']);
  return new Map(jobs.map((job) => [job.id, job]));
}

function enqueuedId(stdout: string): number {
  const match = /^enqueued job (\d+) \(\w+\)$/.exec(stdout.trim());
  if (match === null) throw new Error(`unexpected enqueue output: ${stdout}`);
  return Number(match[1]);
}

beforeAll(async () => {
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
  run.outputs.enqueueAgain = (await leasehold([...C(), 'enqueue', 'ok', '--payload', '{"n":3}', '--key', 'k-2'])).stdout;
  run.ids.stdin = enqueuedId((await leasehold([...C(), 'enqueue', 'ok', '-'], { input: '{"from":"stdin"}' })).stdout);
  for (let i = 0; i < 2; i++) run.ids.fail.push((await leaseholdJson<{ id: number }>([...C(), 'enqueue', 'fail', '--payload', `{"i":${i}}`])).id);
  run.ids.hang = (await leaseholdJson<{ id: number }>([...C(), 'enqueue', 'hang'])).id;
  run.ids.delayed = (await leaseholdJson<{ id: number }>([...C(), 'enqueue', 'ok', '--delay', '3600', '--max-retries', '2'])).id;
  const bulkFile = join(run.dir, 'jobs.jsonl');
  writeFileSync(bulkFile, [1, 2, 3].map((n) => JSON.stringify({ class: 'ok', payload: { n }, priority: n })).join('\n') + '\n');
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
      return [...childHeartbeats(run.live.workers)].every(([id, at]) => ![undefined, at].includes(beats.get(id))) ? later : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 200 },
  );
  expect(await sup.stop()).toBe(0);
});

afterAll(async () => {
  // The supervisor run stopped cleanly: nothing of it may be left running.
  expect(await killLeftovers()).toEqual([]);
});

describe('leasehold against a database from a real supervisor run', () => {
  it('migrate creates the database; enqueue prints the id (human and --json), bulk prints the count', async () => {
    expect(run.migrate).toEqual({ database: run.database, created: true, version: LATEST_VERSION });
    expect(run.outputs.enqueueText!.trim()).toBe(`enqueued job ${run.ids.keyed} (ok)`);
    expect(run.outputs.enqueueTextErr).toBe('');
    expect(run.outputs.enqueueAgain!.trim()).toBe(`job ${run.ids.keyed} was already enqueued with key "k-2"`);
    expect(JSON.parse(run.outputs.bulkJson!)).toEqual({ count: 3, ids: run.ids.bulk });
    expect(run.outputs.bulkText!.trim()).toMatch(/^enqueued 1 job\(s\) \(1 line\(s\) of .*jobs2\.jsonl\)$/);
    // no progress bar when stderr is not a terminal
    expect(run.outputs.bulkTextErr).toBe('');
    const again = await leasehold(['--config', run.configFile, 'migrate']);
    expect(again).toMatchObject({ exitCode: 0, stderr: '' });
    expect(again.stdout.trim()).toBe(`${run.database}: schema at version ${LATEST_VERSION}`);
  });

  it('show: the row, attempts and timeline, with readable times and ages; --json parses the JSON columns', async () => {
    const id = run.ids.stdin;
    const shown = await leaseholdJson<ShowJson>([...C(), 'show', String(id)]);
    expect(Object.keys(shown)).toEqual(['job', 'attempts', 'events']);
    expect(shown.job).toMatchObject({ id, class: 'ok', status: 'SUCCEEDED', attempts: 1, payload: { from: 'stdin' }, result: { ok: true, echo: { from: 'stdin' } } });
    expect(typeof shown.job.created_at).toBe('number');
    expect(shown.attempts).toMatchObject([{ attempt: 1, status: 'SUCCEEDED', error_code: null }]);
    expect(shown.attempts[0]!.owner_id).toBe(shown.job.owner_id);
    // stored: the start carries the claim; the text timeline below shows both
    expect(shown.events.map((e) => e.event)).toEqual(['ENQUEUED', 'STARTED', 'SUCCEEDED']);
    expect(shown.events[0]).toMatchObject({ actor: 'cli', detail: { priority: 0 } });

    const text = await leasehold([...C(), 'show', String(id)]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^job: +${id}$`, 'm'));
    expect(text.stdout).toMatch(/^status: +SUCCEEDED$/m);
    expect(text.stdout).toMatch(/^created: +\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(.+ ago\)$/m);
    expect(text.stdout).toMatch(/^payload: +\{"from":"stdin"\}$/m);
    expect(text.stdout).toMatch(/^#\s+STATUS\s+OWNER\s+STARTED\s+TOOK\s+CPU\s+PEAK RSS\s+ERROR$/m);
    expect(text.stdout).toMatch(/^WHEN\s+AGO\s+EVENT\s+ACTOR\s+DETAIL$/m);
    for (const event of ['ENQUEUED', 'CLAIMED', 'STARTED', 'SUCCEEDED']) expect(text.stdout).toMatch(new RegExp(`${AGO.source}\\s+${event}\\s`));
    // who claimed it, from the start's detail
    expect(text.stdout.split('\n').find((line) => / CLAIMED /.test(line))).toContain(` ${shown.job.owner_id as string} `);
  });

  it('show: a dead-lettered job with its failed attempts', async () => {
    const id = run.ids.fail[0]!;
    const shown = await leaseholdJson<ShowJson>([...C(), 'show', String(id)]);
    expect(shown.job).toMatchObject({ status: 'FAILED', attempts: 2, error_code: 'UPSTREAM:DOWN' });
    expect(shown.attempts.map((a) => [a.attempt, a.status, a.error_code])).toEqual([
      [1, 'FAILED', 'UPSTREAM:DOWN'],
      [2, 'FAILED', 'UPSTREAM:DOWN'],
    ]);
    expect(shown.events.map((e) => e.event)).toContain('RETRY_SCHEDULED');
    const text = (await leasehold([...C(), 'show', String(id)])).stdout;
    expect(text).toMatch(/^error: +UPSTREAM:DOWN: upstream down \(attempt 2\)$/m);
    expect(text).toMatch(/^attempts: +2 of at most 2 \(the class's max_retries when last claimed\)$/m);
  });

  it('list: newest first, filtered by status and class, limited; tables for humans', async () => {
    const all = await leaseholdJson<{ jobs: JobJson[] }>([...C(), 'list', '--limit', '100']);
    const ids = all.jobs.map((job) => job.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(ids).toHaveLength(11);
    expect(Object.keys(all.jobs[0]!)).toEqual([
      'id', 'class', 'status', 'priority', 'attempts', 'max_retries', 'max_retries_from_class', 'created_at', 'run_at', 'started_at', 'finished_at', 'owner_id', 'error_code', 'error_detail', 'idempotency_key',
    ]);

    const failed = await leaseholdJson<{ jobs: JobJson[] }>([...C(), 'list', '--status', 'FAILED']);
    expect(failed.jobs.map((job) => job.id).sort()).toEqual([...run.ids.fail].sort());
    const lower = await leaseholdJson<{ jobs: JobJson[] }>([...C(), 'list', '--status', 'failed', '--class', 'fail', '--limit', '1']);
    expect(lower.jobs.map((job) => job.id)).toEqual([Math.max(...run.ids.fail)]);
    const queued = await leaseholdJson<{ jobs: JobJson[] }>([...C(), 'list', '--class', 'ok', '--status', 'QUEUED']);
    expect(queued.jobs.map((job) => job.id)).toEqual([run.ids.delayed]);
    expect(await leasehold([...C(), 'list', '--class', 'nosuch'])).toMatchObject({ exitCode: 2, stdout: '' });

    const text = (await leasehold([...C(), 'list', '--limit', '3'])).stdout.trimEnd().split('\n');
    expect(text[0]).toMatch(/^ID\s+CLASS\s+STATUS\s+PRI\s+ATTEMPTS\s+CREATED\s+RUN AT\s+FINISHED\s+OWNER\s+ERROR$/);
    expect(text).toHaveLength(4);
    expect(text[1]).toMatch(new RegExp(`^\\s*${ids[0]}\\s+ok\\s+SUCCEEDED\\s+\\d+\\s+1/1\\s+${AGO.source}`));
  });

  it('stats while the supervisor ran: counts, and the oldest in-flight job with its owner, pid, heartbeat age and lease left', () => {
    const stats = run.live.stats;
    const hang = stats.in_flight.find((job) => job.id === run.ids.hang);
    const hangChild = run.live.workers.workers.find((w) => w.class === 'hang')!;
    expect(hang).toMatchObject({ class: 'hang', status: 'RUNNING', owner_id: hangChild.id, pid: hangChild.pid, attempt: 1 });
    expect(hang!.heartbeat_age_ms).toBe(stats.now - hang!.heartbeat_at);
    // the lease was renewed while the job ran
    expect(hangHeartbeat(run.live.statsLater)).toBeGreaterThan(hang!.heartbeat_at);
    expect(hang!.lease_left_ms).toBeGreaterThan(0);
    expect(hang!.runtime_ms).toBeGreaterThanOrEqual(0);
    expect(stats.jobs.by_class.find((row) => row.class === 'hang')).toMatchObject({ RUNNING: 1, total: 1 });
    expect(stats.jobs.by_class.find((row) => row.class === 'ok')).toMatchObject({ QUEUED: 1, SUCCEEDED: 7, total: 8 });
    expect(stats.jobs.total).toMatchObject({ QUEUED: 1, RUNNING: 1, SUCCEEDED: 7, FAILED: 2, CANCELLED: 0, CLAIMED: 0, total: 11 });

    const text = run.live.statsText;
    expect(text).toMatch(/^CLASS\s+QUEUED\s+CLAIMED\s+RUNNING\s+SUCCEEDED\s+FAILED\s+CANCELLED\s+TOTAL$/m);
    expect(text).toMatch(/^ok\s+1\s+0\s+0\s+7\s+0\s+0\s+8$/m);
    expect(text).toMatch(/^oldest in-flight jobs$/m);
    expect(text).toMatch(new RegExp(`^\\s*${run.ids.hang}\\s+hang\\s+RUNNING\\s+${hangChild.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+${hangChild.pid}\\s+1\\s`, 'm'));
  });

  it('stats after the run: retries, top error codes (overall and per class), throughput, retention and the database size', async () => {
    const stats = await leaseholdJson<StatsJson>([...C(), 'stats']);
    expect(Object.keys(stats)).toEqual(['now', 'window_ms', 'jobs', 'paused', 'rate_limits', 'throughput', 'in_flight', 'retries', 'errors', 'cost', 'retention', 'database']);
    expect(stats.window_ms).toBe(24 * 3_600_000);
    // The hang job was handed back at shutdown: nothing in flight, the release is not an error.
    expect(stats.in_flight).toEqual([]);
    expect(stats.jobs.total).toMatchObject({ QUEUED: 2, SUCCEEDED: 7, FAILED: 2, total: 11 });
    expect(stats.retries.buckets).toEqual([
      { class: 'fail', status: 'FAILED', attempts: 2, jobs: 2 },
      { class: 'ok', status: 'SUCCEEDED', attempts: 1, jobs: 7 },
    ]);
    expect(stats.retries).toMatchObject({ finished: 9, retried: 2 });
    expect(stats.errors.top).toMatchObject([{ code: 'UPSTREAM:DOWN', count: 4 }]);
    expect(stats.errors.by_class).toMatchObject([{ class: 'fail', code: 'UPSTREAM:DOWN', count: 4 }]);
    expect(stats.throughput.last_hour).toMatchObject({ SUCCEEDED: 7, FAILED: 2, CANCELLED: 0, total: 9 });
    expect(stats.throughput.last_minute.total).toBeLessThanOrEqual(9);
    expect(stats.retention.policy).toEqual({ succeeded_days: 30, failed_days: 90, cancelled_days: 30 });
    expect(stats.retention.would_delete.map((line) => [line.status, line.older_than_days, line.count])).toEqual([
      ['SUCCEEDED', 30, 0],
      ['FAILED', 90, 0],
      ['CANCELLED', 30, 0],
    ]);
    expect(stats.retention.would_delete[0]!.finished_before).toBeCloseTo(stats.now - 30 * 86_400_000, -3);
    expect(stats.database.bytes).toBe(stats.database.page_count * stats.database.page_size);
    expect(stats.database.bytes).toBeGreaterThan(0);

    const text = (await leasehold([...C(), 'stats', '--hours', '1'])).stdout;
    expect(text).toMatch(/^retries: jobs finished in the last 1h00m by attempts spent \(2 of 9 needed more than one\)$/m);
    expect(text).toMatch(/^fail\s+FAILED\s+2\s+2$/m);
    expect(text).toMatch(new RegExp(`^UPSTREAM:DOWN\\s+4\\s+${AGO.source}$`, 'm'));
    expect(text).toMatch(/^retention would delete 0 job\(s\) now$/m);
    expect(text).toMatch(/^database: [\d.]+ KiB \(\d+ pages of \d+ bytes, \d+ free\)$/m);
    expect(text).toMatch(/^throughput: last minute \d+ finished .*; last hour 9 finished \(7 succeeded, 2 failed, 0 cancelled\)/m);
  });

  it('workers while the supervisor ran: pid, class, state, current job, memory, uptime, heartbeat; none stale', () => {
    const { workers } = run.live.workers;
    const supervisor = workers.find((w) => w.kind === 'supervisor')!;
    expect(supervisor).toMatchObject({ pid: run.supervisorPid, state: 'ready', stale: false, exited_at: null });
    const children = workers.filter((w) => w.kind === 'child');
    expect(children.map((w) => w.class).sort()).toEqual(['fail', 'hang', 'ok']);
    for (const child of children) {
      expect(child).toMatchObject({ supervisor_id: supervisor.id, stale: false, exited_at: null, restarts: 0 });
      expect(child.memory_bytes).toBeGreaterThan(0);
      expect(child.uptime_ms).toBeGreaterThan(0);
      expect(child.heartbeat_age_ms).toBe(run.live.workers.now - child.heartbeat_at);
      // the child kept beating while the supervisor ran
      expect(childHeartbeats(run.live.workersLater).get(child.id)).toBeGreaterThan(child.heartbeat_at);
    }
    expect(children.find((w) => w.class === 'hang')).toMatchObject({ job_id: run.ids.hang, state: 'busy' });

    const lines = run.live.workersText.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^KIND\s+ID\s+PID\s+CLASS\s+STATE\s+JOB\s+CPU\s+MEMORY\s+RESTARTS\s+UPTIME\s+HEARTBEAT$/);
    expect(run.live.workersText).toMatch(new RegExp(`^supervisor\\s+\\S+\\s+${run.supervisorPid}\\s+-\\s+ready\\s`, 'm'));
    expect(run.live.workersText).toMatch(new RegExp(`^child\\s+\\S+hang\\S+\\s+\\d+\\s+hang\\s+busy\\s+${run.ids.hang}\\s+[\\d.]+%\\s+[\\d.]+ MiB\\s+0\\s+\\S+\\s+${AGO.source}$`, 'm'));
    expect(run.live.workersText).not.toMatch(/STALE/);
  });

  it('workers after the run: nobody is live; --all shows who exited and how', async () => {
    expect(await leaseholdJson<WorkersJson>([...C(), 'workers'])).toMatchObject({ workers: [] });
    const all = await leaseholdJson<WorkersJson>([...C(), 'workers', '--all']);
    expect(all.workers).toHaveLength(4);
    expect(all.workers.every((w) => w.exited_at !== null && !w.stale)).toBe(true);
    const text = (await leasehold([...C(), 'workers', '--all'])).stdout;
    expect(text).toMatch(/^supervisor\s+\S+\s+\d+\s+-\s+exited \(code 0\)\s/m);
  });

  it('cancel: a queued job at once, again is fine, a finished one is refused and nothing changes', async () => {
    const { db, args } = fresh();
    const id = run.ids.delayed;
    expect(await leaseholdJson([...args, 'cancel', String(id)])).toEqual({ id, outcome: 'cancelled', status: 'CANCELLED' });
    expect((await leaseholdJson<ShowJson>([...args, 'show', String(id)])).job.status).toBe('CANCELLED');
    const again = await leasehold([...args, 'cancel', String(id)]);
    expect(again).toMatchObject({ exitCode: 0, stderr: '' });
    expect(again.stdout.trim()).toBe(`job ${id}: was already cancelled`);

    const before = fingerprint(db);
    const done = await leasehold([...args, 'cancel', String(run.ids.stdin)]);
    expect(done).toMatchObject({ exitCode: 2, stdout: '' });
    expect(done.stderr).toBe(`leasehold: job ${run.ids.stdin} already ended SUCCEEDED: there is nothing to cancel`);
    expect(fingerprint(db)).toEqual(before);
  });

  it('cancel: a running job is marked; its worker learns at the next heartbeat', async () => {
    const { db, args } = fresh();
    const enqueued = await leaseholdJson<{ id: number }>([...args, 'enqueue', 'hang']);
    const store = await openStore(db);
    try {
      const [claimed] = await claimJobs(store, { classes: ['hang'], ownerId: 'test-worker', limit: 1, leaseMs: 60_000 });
      expect(claimed?.id).toBe(run.ids.hang); // handed back at shutdown, it is the oldest queued hang job
      const text = await leasehold([...args, 'cancel', String(claimed!.id)]);
      expect(text.stdout.trim()).toBe(`job ${claimed!.id}: cancel requested: its worker aborts it at the next heartbeat`);
      expect(await leaseholdJson([...args, 'cancel', String(claimed!.id)])).toEqual({ id: claimed!.id, outcome: 'already_requested', status: 'CLAIMED' });
      expect(await extendLease(store, { id: claimed!.id, leaseToken: claimed!.leaseToken, leaseMs: 60_000 })).toMatchObject({ cancelRequested: true });
      expect(enqueued.id).toBeGreaterThan(claimed!.id);
    } finally {
      await store.close();
    }
  });

  it('retry: one FAILED job, or every FAILED job of a class; anything else is refused', async () => {
    const { db, args } = fresh();
    const [first, second] = run.ids.fail as [number, number];
    expect(await leaseholdJson([...args, 'retry', String(first)])).toEqual({ id: first, outcome: 'queued' });
    const shown = await leaseholdJson<ShowJson>([...args, 'show', String(first)]);
    expect(shown.job.status).toBe('QUEUED');
    expect(shown.events.at(-1)).toMatchObject({ event: 'RETRY_SCHEDULED', actor: 'cli', detail: { manual: true } });

    const before = fingerprint(db);
    const notFailed = await leasehold([...args, 'retry', String(first)]);
    expect(notFailed).toMatchObject({ exitCode: 2, stdout: '' });
    expect(notFailed.stderr).toBe(`leasehold: job ${first} is QUEUED, not FAILED: only FAILED jobs can be retried`);
    const wrongStatus = await leasehold([...args, 'retry', '--status', 'SUCCEEDED']);
    expect(wrongStatus).toMatchObject({ exitCode: 2 });
    expect(wrongStatus.stderr).toMatch(/^leasehold: only FAILED jobs can be retried: --status must be FAILED, got "SUCCEEDED"$/);
    expect(fingerprint(db)).toEqual(before);

    expect(await leaseholdJson([...args, 'retry', '--status', 'FAILED', '--class', 'ok'])).toEqual({ count: 0 });
    expect(await leaseholdJson([...args, 'retry', '--status', 'FAILED', '--error-code', 'OTHER:CODE'])).toEqual({ count: 0 });
    expect(await leaseholdJson([...args, 'retry', '--status', 'FAILED', '--class', 'ok', '--error-code', 'UPSTREAM:DOWN'])).toEqual({ count: 0 });
    const text = await leasehold([...args, 'retry', '--status', 'FAILED', '--class', 'fail', '--error-code', 'UPSTREAM:DOWN']);
    expect(text.stdout.trim()).toBe('1 FAILED job(s) of class fail with error code UPSTREAM:DOWN queued to run again');
    expect((await leaseholdJson<ShowJson>([...args, 'show', String(second)])).job.status).toBe('QUEUED');
  });

  it('prune: --dry-run says what would go and writes nothing; prune deletes it with its attempts and events', async () => {
    const { db } = fresh();
    // The same classes, a policy short enough for jobs finished a few seconds ago.
    const config = writeConfig(join(newDir(), 'prune.yaml'), {
      database: db,
      logFile: join(newDir(), 'unused.log'),
      retention: { succeeded_days: 0.00001, failed_days: 90, cancelled_days: 0.00001, batch_size: 2 },
      classes: [
        { name: 'ok', handler: fixture('ok') },
        { name: 'fail', handler: fixture('fail') },
        { name: 'hang', handler: fixture('hang') },
      ],
    });
    const args = ['--config', config];
    const before = fingerprint(db);
    const dry = await leaseholdJson<{ dry_run: boolean; total: number; complete: boolean; by_status: { status: string; count: number; older_than_days: number }[] }>([
      ...args,
      'prune',
      '--dry-run',
    ]);
    expect(dry).toMatchObject({ dry_run: true, total: 7, complete: true });
    expect(dry.by_status.map((line) => [line.status, line.older_than_days, line.count])).toEqual([
      ['SUCCEEDED', 0.00001, 7],
      ['FAILED', 90, 0],
      ['CANCELLED', 0.00001, 0],
    ]);
    const dryText = (await leasehold([...args, 'prune', '--dry-run'])).stdout;
    expect(dryText).toMatch(/^STATUS\s+KEEP DAYS\s+FINISHED BEFORE\s+WOULD DELETE$/m);
    expect(dryText).toMatch(/^SUCCEEDED\s+0\.00001\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\s+7$/m);
    expect(dryText).toMatch(/^would delete 7 job\(s\) with their attempts and events$/m);
    expect(fingerprint(db)).toEqual(before);
    expect((await leaseholdJson<StatsJson>([...args, 'stats'])).retention.total).toBe(7);

    const pruned = await leaseholdJson<{ dry_run: boolean; total: number; by_status: { status: string; count: number }[] }>([...args, 'prune']);
    expect(pruned).toMatchObject({ dry_run: false, total: 7 });
    expect(await leaseholdJson([...args, 'list', '--status', 'SUCCEEDED'])).toEqual({ jobs: [] });
    for (const id of run.ids.ok) expect(countRows(db, 'SELECT count(*) FROM job_events WHERE job_id = ?', id)).toBe(0);
    expect(countRows(db, 'SELECT count(*) FROM job_attempts WHERE job_id NOT IN (SELECT id FROM jobs)')).toBe(0);
    const after = fingerprint(db);
    expect(after.rows.jobs).toBe(before.rows.jobs! - 7);
    expect(after.rows.job_attempts).toBe(before.rows.job_attempts! - 7);
    const again = (await leasehold([...args, 'prune'])).stdout;
    expect(again).toMatch(/^deleted 0 job\(s\) with their attempts and events in \d+ms$/m);
  });

  it('sweep: takes back an expired lease now', async () => {
    const { db, args } = fresh();
    const store = await openStore(db);
    try {
      const claimAsHang = () => claimJobs(store, { classes: ['hang'], ownerId: 'gone-worker', limit: 1, leaseMs: 1, classMaxRetries: 0 });
      const [claimed] = await claimAsHang();
      await waitFor('the lease to run out', () => Date.now() > claimed!.leaseExpiresAt + 5);
      // A claim counts as a start, and the class allows no retries (its child claims with max_retries 0): the expired attempt dead-letters the job.
      const swept = await leaseholdJson<{ count: number; recovered: Record<string, unknown>[] }>([...args, 'sweep']);
      expect(swept).toEqual({
        count: 1,
        recovered: [{ id: claimed!.id, class: 'hang', attempt: claimed!.attempt, owner_id: 'gone-worker', status: 'FAILED', run_at: null, released: false }],
      });
      expect((await store.jobGet({ id: claimed!.id }))?.status).toBe('FAILED');
      await leasehold([...args, 'enqueue', 'hang']);
      const [again] = await claimAsHang();
      await waitFor('the lease to run out', () => Date.now() > again!.leaseExpiresAt + 5);
      const text = await leasehold([...args, 'sweep']);
      expect(text.stdout).toMatch(/^took back 1 job\(s\) whose lease expired$/m);
      expect(text.stdout).toMatch(new RegExp(`^\\s*${again!.id}\\s+hang\\s+${again!.attempt}\\s+gone-worker\\s+FAILED\\s+-$`, 'm'));
      expect((await leasehold([...args, 'sweep'])).stdout.trim()).toBe('no expired leases');
    } finally {
      await store.close();
    }
  });

  it('migrate creates a new database with --db, and says when there was nothing to do', async () => {
    const file = join(newDir(), 'sub', 'new.db');
    expect(await leaseholdJson(['--db', file, 'migrate'])).toEqual({ database: file, created: true, version: LATEST_VERSION });
    expect(existsSync(file)).toBe(true);
    expect(await leaseholdJson(['--db', file, 'migrate'])).toEqual({ database: file, created: false, version: LATEST_VERSION });
  });
});

describe('a supervisor that died without cleaning up', () => {
  let sup: SupervisorRun | undefined;
  afterEach(async () => {
    const killed = await killLeftovers();
    sup = undefined;
    expect(killed).toEqual([]);
  });

  it('workers shows it, and its children, as STALE once its heartbeat is old', async () => {
    const dir = newDir();
    const logFile = join(dir, 'supervisor.log');
    const database = join(dir, 'queue.db');
    const config = writeConfig(join(dir, 'queue.yaml'), { database, logFile, classes: [{ name: 'ok', handler: fixture('ok') }] });
    sup = await SupervisorRun.start(config, logFile);
    await sup.waitForEvent('CHILD_READY');
    const children = sup.childPids();
    expect(children.length).toBeGreaterThan(0);
    sup.signal('SIGKILL');
    await sup.waitForExit();
    // Its children notice their parent is gone and exit on their own.
    await waitFor('the orphaned children to exit', () => children.every((pid) => !isAlive(pid)), { timeoutMs: 15_000 });

    const stale = await waitFor(
      'the dead supervisor to show as stale',
      async () => {
        const listed = await leaseholdJson<WorkersJson>(['--db', database, 'workers']);
        return listed.workers.length === 2 && listed.workers.every((w) => w.stale) ? listed : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 500 },
    );
    const supervisor = stale.workers.find((w) => w.kind === 'supervisor')!;
    expect(supervisor.heartbeat_age_ms).toBeGreaterThan(stale.stale_after_ms);
    expect(supervisor.exited_at).toBeNull();
    const text = (await leasehold(['--db', database, 'workers'])).stdout;
    expect(text).toMatch(/^supervisor\s+\S+\s+\d+\s+-\s+STALE \(ready\)\s/m);
    expect(text).toMatch(/^2 worker\(s\) STALE: their supervisor has not refreshed the registry for over 6s \(gone or stuck\)$/m);
  });
});
