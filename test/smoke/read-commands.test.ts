/**
 * The `leasehold` binary, run as a user runs it, against a database produced
 * by a real supervisor run: the producers' and readers' commands, each
 * one's human output and its --json shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killLeftovers, leasehold, leaseholdJson } from '../cli/helpers.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import type { JobJson, ShowJson, StatsJson, WorkersJson } from '../cli/json-shapes.js';
import { C, childHeartbeats, hangHeartbeat, produceSupervisorRun, run } from '../cli/supervisor-run.js';

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
    expect(run.outputs.enqueueAgain!.trim()).toBe(`job ${run.ids.keyed} already holds key "k-2" (not created)`);
    expect(JSON.parse(run.outputs.bulkJson!)).toEqual({ count: 3, ids: run.ids.bulk, created: [true, true, true] });
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
    expect(Object.keys(shown)).toEqual(['job', 'parents', 'children', 'more_children', 'attempts', 'events']);
    expect(shown).toMatchObject({ parents: [], children: [], more_children: 0 });
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
      WAITING: 0,
      QUEUED: 1,
      RUNNING: 1,
      SUCCEEDED: 7,
      FAILED: 2,
      CANCELLED: 0,
      CLAIMED: 0,
      total: 11,
    });

    const text = run.live.statsText;
    expect(text).toMatch(/^CLASS\s+WAITING\s+QUEUED\s+CLAIMED\s+RUNNING\s+SUCCEEDED\s+FAILED\s+CANCELLED\s+TOTAL$/m);
    expect(text).toMatch(/^ok\s+0\s+1\s+0\s+0\s+7\s+0\s+0\s+8$/m);
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
    // the window starts at the start of the minute a day ago
    expect(stats.retries.since).toBe(Math.floor((stats.now - 24 * 3_600_000) / 60_000) * 60_000);
    expect(stats.window_ms).toBe(stats.now - stats.retries.since);
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
});
