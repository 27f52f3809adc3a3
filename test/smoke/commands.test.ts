/**
 * The `leasehold` binary, run as a user runs it, against a database produced
 * by a real supervisor run: each command's human output and its --json shape.
 * Commands that write work on a copy of that database.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { waitFor } from '../helpers/wait.js';
import {
  countRows,
  fingerprint,
  fixture,
  killLeftovers,
  leasehold,
  leaseholdJson,
  writeConfig,
} from '../cli/helpers.js';
import { claimJobs, extendLease } from '../helpers/fenced-writes.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import type { JobJson, ShowJson, StatsJson, WorkersJson } from '../cli/json-shapes.js';
import { C, childHeartbeats, fresh, hangHeartbeat, newDir, produceSupervisorRun, run } from '../cli/supervisor-run.js';

const LATEST_VERSION = SQLITE_MIGRATIONS[SQLITE_MIGRATIONS.length - 1]!.version;

const AGO = /\d+(ms|s|m\d\ds) ago/;

beforeAll(produceSupervisorRun);

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
    expect(shown.job).toMatchObject({
      id,
      class: 'ok',
      status: 'SUCCEEDED',
      attempts: 1,
      payload: { from: 'stdin' },
      result: { ok: true, echo: { from: 'stdin' } },
    });
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
    for (const event of ['ENQUEUED', 'CLAIMED', 'STARTED', 'SUCCEEDED'])
      expect(text.stdout).toMatch(new RegExp(`${AGO.source}\\s+${event}\\s`));
    // who claimed it, from the start's detail
    expect(text.stdout.split('\n').find((line) => / CLAIMED /.test(line))).toContain(
      ` ${shown.job.owner_id as string} `,
    );
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
      'id',
      'class',
      'status',
      'priority',
      'attempts',
      'runs',
      'max_retries',
      'max_retries_from_class',
      'created_at',
      'run_at',
      'started_at',
      'finished_at',
      'owner_id',
      'error_code',
      'error_detail',
      'idempotency_key',
    ]);

    const failed = await leaseholdJson<{ jobs: JobJson[] }>([...C(), 'list', '--status', 'FAILED']);
    expect(failed.jobs.map((job) => job.id).sort()).toEqual([...run.ids.fail].sort());
    const lower = await leaseholdJson<{ jobs: JobJson[] }>([
      ...C(),
      'list',
      '--status',
      'failed',
      '--class',
      'fail',
      '--limit',
      '1',
    ]);
    expect(lower.jobs.map((job) => job.id)).toEqual([Math.max(...run.ids.fail)]);
    const queued = await leaseholdJson<{ jobs: JobJson[] }>([...C(), 'list', '--class', 'ok', '--status', 'QUEUED']);
    expect(queued.jobs.map((job) => job.id)).toEqual([run.ids.delayed]);
    expect(await leasehold([...C(), 'list', '--class', 'nosuch'])).toMatchObject({ exitCode: 2, stdout: '' });

    const text = (await leasehold([...C(), 'list', '--limit', '3'])).stdout.trimEnd().split('\n');
    expect(text[0]).toMatch(
      /^ID\s+CLASS\s+STATUS\s+PRI\s+ATTEMPTS\s+CREATED\s+RUN AT\s+RUNNING\s+FINISHED\s+OWNER\s+ERROR$/,
    );
    expect(text).toHaveLength(4);
    expect(text[1]).toMatch(new RegExp(`^\\s*${ids[0]}\\s+ok\\s+SUCCEEDED\\s+\\d+\\s+1/1\\s+${AGO.source}`));
  });

  it('stats while the supervisor ran: counts, and the oldest in-flight job with its owner, pid, heartbeat age and lease left', () => {
    const stats = run.live.stats;
    const hang = stats.in_flight.find((job) => job.id === run.ids.hang);
    const hangChild = run.live.workers.workers.find((w) => w.class === 'hang')!;
    expect(hang).toMatchObject({
      class: 'hang',
      status: 'RUNNING',
      owner_id: hangChild.id,
      pid: hangChild.pid,
      attempt: 1,
    });
    expect(hang!.heartbeat_age_ms).toBe(stats.now - hang!.heartbeat_at);
    // the lease was renewed while the job ran
    expect(hangHeartbeat(run.live.statsLater)).toBeGreaterThan(hang!.heartbeat_at);
    expect(hang!.lease_left_ms).toBeGreaterThan(0);
    expect(hang!.runtime_ms).toBeGreaterThanOrEqual(0);
    expect(stats.jobs.by_class.find((row) => row.class === 'hang')).toMatchObject({ RUNNING: 1, total: 1 });
    expect(stats.jobs.by_class.find((row) => row.class === 'ok')).toMatchObject({ QUEUED: 1, SUCCEEDED: 7, total: 8 });
    expect(stats.jobs.total).toMatchObject({
      QUEUED: 1,
      RUNNING: 1,
      SUCCEEDED: 7,
      FAILED: 2,
      CANCELLED: 0,
      CLAIMED: 0,
      total: 11,
    });

    const text = run.live.statsText;
    expect(text).toMatch(/^CLASS\s+QUEUED\s+CLAIMED\s+RUNNING\s+SUCCEEDED\s+FAILED\s+CANCELLED\s+TOTAL$/m);
    expect(text).toMatch(/^ok\s+1\s+0\s+0\s+7\s+0\s+0\s+8$/m);
    expect(text).toMatch(/^oldest in-flight jobs$/m);
    expect(text).toMatch(
      new RegExp(
        `^\\s*${run.ids.hang}\\s+hang\\s+RUNNING\\s+${hangChild.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+${hangChild.pid}\\s+1\\s`,
        'm',
      ),
    );
  });

  it('stats after the run: retries, top error codes (overall and per class), throughput, retention and the database size', async () => {
    const stats = await leaseholdJson<StatsJson>([...C(), 'stats']);
    expect(Object.keys(stats)).toEqual([
      'now',
      'window_ms',
      'jobs',
      'queues',
      'paused',
      'rate_limits',
      'throughput',
      'in_flight',
      'retries',
      'errors',
      'cost',
      'retention',
      'database',
    ]);
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
    expect(text).toMatch(
      /^retries: jobs finished in the last 1h00m by attempts spent \(2 of 9 needed more than one\)$/m,
    );
    expect(text).toMatch(/^fail\s+FAILED\s+2\s+2$/m);
    expect(text).toMatch(new RegExp(`^UPSTREAM:DOWN\\s+4\\s+${AGO.source}$`, 'm'));
    expect(text).toMatch(/^retention would delete 0 job\(s\) now$/m);
    expect(text).toMatch(/^database: [\d.]+ KiB \(\d+ pages of \d+ bytes, \d+ free\)$/m);
    expect(text).toMatch(
      /^throughput: last minute \d+ finished .*; last hour 9 finished \(7 succeeded, 2 failed, 0 cancelled\)/m,
    );
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
    expect(run.live.workersText).toMatch(
      new RegExp(`^supervisor\\s+\\S+\\s+${run.supervisorPid}\\s+-\\s+ready\\s`, 'm'),
    );
    expect(run.live.workersText).toMatch(
      new RegExp(
        `^child\\s+\\S+hang\\S+\\s+\\d+\\s+hang\\s+busy\\s+${run.ids.hang}\\s+[\\d.]+%\\s+[\\d.]+ MiB\\s+0\\s+\\S+\\s+${AGO.source}$`,
        'm',
      ),
    );
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
    expect(await leaseholdJson([...args, 'cancel', String(id)])).toEqual({
      id,
      outcome: 'cancelled',
      status: 'CANCELLED',
    });
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
      const [claimed] = await claimJobs(store, {
        classes: ['hang'],
        ownerId: 'test-worker',
        limit: 1,
        leaseMs: 60_000,
      });
      expect(claimed?.id).toBe(run.ids.hang); // handed back at shutdown, it is the oldest queued hang job
      const text = await leasehold([...args, 'cancel', String(claimed!.id)]);
      expect(text.stdout.trim()).toBe(
        `job ${claimed!.id}: cancel requested: its worker aborts it at the next heartbeat`,
      );
      expect(await leaseholdJson([...args, 'cancel', String(claimed!.id)])).toEqual({
        id: claimed!.id,
        outcome: 'already_requested',
        status: 'CLAIMED',
      });
      expect(
        await extendLease(store, { id: claimed!.id, leaseToken: claimed!.leaseToken, leaseMs: 60_000 }),
      ).toMatchObject({ cancelRequested: true });
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
    expect(wrongStatus.stderr).toMatch(
      /^leasehold: only FAILED jobs can be retried: --status must be FAILED, got "SUCCEEDED"$/,
    );
    expect(fingerprint(db)).toEqual(before);

    expect(await leaseholdJson([...args, 'retry', '--status', 'FAILED', '--class', 'ok'])).toEqual({ count: 0 });
    expect(await leaseholdJson([...args, 'retry', '--status', 'FAILED', '--error-code', 'OTHER:CODE'])).toEqual({
      count: 0,
    });
    expect(
      await leaseholdJson([...args, 'retry', '--status', 'FAILED', '--class', 'ok', '--error-code', 'UPSTREAM:DOWN']),
    ).toEqual({ count: 0 });
    const text = await leasehold([
      ...args,
      'retry',
      '--status',
      'FAILED',
      '--class',
      'fail',
      '--error-code',
      'UPSTREAM:DOWN',
    ]);
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
    const dry = await leaseholdJson<{
      dry_run: boolean;
      total: number;
      complete: boolean;
      by_status: { status: string; count: number; older_than_days: number }[];
    }>([...args, 'prune', '--dry-run']);
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

    const pruned = await leaseholdJson<{
      dry_run: boolean;
      total: number;
      by_status: { status: string; count: number }[];
    }>([...args, 'prune']);
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
      const claimAsHang = () =>
        claimJobs(store, { classes: ['hang'], ownerId: 'gone-worker', limit: 1, leaseMs: 1, classMaxRetries: 0 });
      const [claimed] = await claimAsHang();
      await waitFor('the lease to run out', () => Date.now() > claimed!.leaseExpiresAt + 5);
      // A claim counts as a start, and the class allows no retries (its child claims with max_retries 0): the expired attempt dead-letters the job.
      const swept = await leaseholdJson<{ count: number; recovered: Record<string, unknown>[] }>([...args, 'sweep']);
      expect(swept).toEqual({
        count: 1,
        recovered: [
          {
            id: claimed!.id,
            class: 'hang',
            attempt: claimed!.attempt,
            owner_id: 'gone-worker',
            status: 'FAILED',
            run_at: null,
            released: false,
          },
        ],
      });
      expect((await store.jobGet({ id: claimed!.id }))?.status).toBe('FAILED');
      await leasehold([...args, 'enqueue', 'hang']);
      const [again] = await claimAsHang();
      await waitFor('the lease to run out', () => Date.now() > again!.leaseExpiresAt + 5);
      const text = await leasehold([...args, 'sweep']);
      expect(text.stdout).toMatch(/^took back 1 job\(s\) whose lease expired$/m);
      expect(text.stdout).toMatch(
        new RegExp(`^\\s*${again!.id}\\s+hang\\s+${again!.attempt}\\s+gone-worker\\s+FAILED\\s+-$`, 'm'),
      );
      expect((await leasehold([...args, 'sweep'])).stdout.trim()).toBe('no expired leases');
    } finally {
      await store.close();
    }
  });

  it('migrate creates a new database with --db, and says when there was nothing to do', async () => {
    const file = join(newDir(), 'sub', 'new.db');
    expect(await leaseholdJson(['--db', file, 'migrate'])).toEqual({
      database: file,
      created: true,
      version: LATEST_VERSION,
    });
    expect(existsSync(file)).toBe(true);
    expect(await leaseholdJson(['--db', file, 'migrate'])).toEqual({
      database: file,
      created: false,
      version: LATEST_VERSION,
    });
  });
});
