/**
 * What the supervisor serves and schedules for operators: /metrics and
 * /healthz from a real `supervise` run (port 0, the bound port read from the
 * log), and retention running on its interval.
 */
import { Registry } from 'prom-client';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/open.js';
import { HttpServer, type Unhealthy } from '../../supervisor/http-server.js';
import { LeaseLostError } from '../../src/errors.js';
import { closeLogger, createLogger } from '../../src/log.js';
import { openQueue } from '../../src/queue/queue.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import {
  fixture,
  killLeftovers,
  leasehold,
  leaseholdJson,
  SupervisorRun,
  writeConfig,
  type ClassSpec,
} from './helpers.js';
import { claimJobs, extendLease } from '../helpers/fenced-writes.js';
import { metricValue, parseMetrics } from '../helpers/metrics.js';

const newDir = tempDir('leasehold-http-');

afterEach(async () => {
  expect(await killLeftovers()).toEqual([]);
});

async function get(url: string): Promise<{ status: number; body: string; type: string | null }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text(), type: response.headers.get('content-type') };
}

/** A temp folder with a queue.yaml (these settings, a database and a log file in it), and the CLI's arguments for it. */
async function setUp(spec: { classes: ClassSpec[]; [key: string]: unknown }): Promise<{
  database: string;
  logFile: string;
  config: string;
  C: string[];
}> {
  const dir = newDir();
  const database = join(dir, 'queue.db');
  const logFile = join(dir, 'supervisor.log');
  const config = writeConfig(join(dir, 'queue.yaml'), { database, logFile, ...spec });
  await migrate({ database });
  return { database, logFile, config, C: ['--config', config] };
}

/** `leasehold enqueue` (after the config arguments `C`); the new job's id. */
async function enqueue(C: string[], ...args: string[]): Promise<number> {
  return (await leaseholdJson<{ id: number }>([...C, 'enqueue', ...args])).id;
}

describe('the supervisor over HTTP', () => {
  it('serves /metrics (jobs, counters, durations, restarts, children, recoveries, zombie writes) and /healthz', async () => {
    const { database, logFile, config, C } = await setUp({
      http: { port: 0 },
      shutdown_grace_seconds: 3,
      classes: [
        { name: 'ok', handler: fixture('ok') },
        { name: 'fail', handler: fixture('fail'), max_retries: 1 },
        { name: 'crash', handler: fixture('crash-once'), max_retries: 3 },
        { name: 'hang', handler: fixture('hang') },
      ],
    });
    const ok: number[] = [];
    for (let i = 0; i < 3; i++) ok.push(await enqueue(C, 'ok', '--payload', `{"i":${i}}`));
    const fail = await enqueue(C, 'fail');
    const crash = await enqueue(C, 'crash');

    const sup = await SupervisorRun.start(config, logFile);
    const listening = await sup.waitForEvent('HTTP_LISTENING');
    const port = listening.port as number;
    expect(port).toBeGreaterThan(0);
    expect(sup.events('SUPERVISOR_STARTED')[0]).toMatchObject({ http_port: port });
    const base = `http://127.0.0.1:${port}`;

    expect(await get(`${base}/healthz`)).toMatchObject({ status: 200, body: '{"status":"ok"}\n' });
    expect((await get(`${base}/nope`)).status).toBe(404);

    const statuses = async () =>
      new Map(
        (await leaseholdJson<{ jobs: { id: number; status: string }[] }>([...C, 'list'])).jobs.map((j) => [
          j.id,
          j.status,
        ]),
      );
    await waitFor(
      'ok and crash jobs SUCCEEDED, the fail job FAILED',
      async () => {
        const now = await statuses();
        return (
          ok.every((id) => now.get(id) === 'SUCCEEDED') && now.get(crash) === 'SUCCEEDED' && now.get(fail) === 'FAILED'
        );
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );

    // A zombie write (a stale lease token), and a lease that runs out with nobody to renew it.
    const queue = await openQueue({ database, actor: 'test' });
    try {
      await expect(
        extendLease(queue.store, { id: ok[0]!, leaseToken: 'stale-token', leaseMs: 1_000 }),
      ).rejects.toBeInstanceOf(LeaseLostError);
      const orphan = await queue.enqueue({ class: 'orphan' });
      const [claimed] = await claimJobs(queue.store, {
        classes: ['orphan'],
        ownerId: 'gone-worker',
        limit: 1,
        leaseMs: 200,
      });
      expect(claimed?.id).toBe(orphan.id);
    } finally {
      await queue.close();
    }

    const childPids = sup.childPids();
    // Counters follow the children's messages, a moment after the database: wait until they have caught up.
    const scrape = await waitFor(
      'the sweeper recovery, the last outcomes and every live child sampled',
      async () => {
        const response = await get(`${base}/metrics`);
        const samples = parseMetrics(response.body);
        const sampled = samples.filter((s) => s.name === 'leasehold_child_memory_bytes' && s.value > 0).length;
        const caughtUp =
          metricValue(samples, 'leasehold_lease_recoveries_total', { class: 'orphan' }) === 1 &&
          metricValue(samples, 'leasehold_jobs_succeeded_total', { class: 'ok' }) === 3 &&
          metricValue(samples, 'leasehold_jobs_succeeded_total', { class: 'crash' }) === 1 &&
          metricValue(samples, 'leasehold_jobs_dead_lettered_total', { class: 'fail' }) === 1;
        return caughtUp && sampled === 4 ? { response, samples } : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 250 },
    );
    expect(scrape.response.status).toBe(200);
    expect(scrape.response.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = scrape.samples;
    // jobs by class and status, read from the database at scrape time
    expect(metricValue(m, 'leasehold_jobs', { class: 'ok', status: 'SUCCEEDED' })).toBe(3);
    expect(metricValue(m, 'leasehold_jobs', { class: 'fail', status: 'FAILED' })).toBe(1);
    expect(metricValue(m, 'leasehold_jobs', { class: 'hang', status: 'QUEUED' })).toBe(0);
    expect(metricValue(m, 'leasehold_jobs', { class: 'orphan', status: 'QUEUED' })).toBe(1);
    // counters, from what the children told the supervisor
    expect(metricValue(m, 'leasehold_jobs_claimed_total', { class: 'ok' })).toBe(3);
    expect(metricValue(m, 'leasehold_jobs_succeeded_total', { class: 'ok' })).toBe(3);
    expect(metricValue(m, 'leasehold_jobs_claimed_total', { class: 'fail' })).toBe(2);
    expect(metricValue(m, 'leasehold_jobs_failed_total', { class: 'fail' })).toBe(2);
    expect(metricValue(m, 'leasehold_jobs_dead_lettered_total', { class: 'fail' })).toBe(1);
    expect(metricValue(m, 'leasehold_jobs_succeeded_total', { class: 'crash' })).toBe(1);
    expect(metricValue(m, 'leasehold_job_duration_seconds_count', { class: 'ok', outcome: 'SUCCEEDED' })).toBe(3);
    expect(
      metricValue(m, 'leasehold_job_duration_seconds_bucket', { class: 'ok', outcome: 'SUCCEEDED', le: '+Inf' }),
    ).toBe(3);
    expect(metricValue(m, 'leasehold_job_duration_seconds_count', { class: 'fail', outcome: 'FAILED' })).toBe(1);
    // the crash: a restart and a take-back
    expect(metricValue(m, 'leasehold_child_restarts_total', { class: 'crash' })).toBe(1);
    expect(metricValue(m, 'leasehold_child_restarts_total', { class: 'ok' })).toBe(0);
    expect(
      metricValue(m, 'leasehold_jobs_recovered_total', {
        class: 'crash',
        code: 'WORKER:CRASHED',
        source: 'child_exit',
      }),
    ).toBe(1);
    // the sweeper's recovery of the expired lease
    expect(
      metricValue(m, 'leasehold_jobs_recovered_total', { class: 'orphan', code: 'LEASE:EXPIRED', source: 'sweeper' }),
    ).toBe(1);
    // the zombie write, counted from the timeline
    expect(metricValue(m, 'leasehold_zombie_writes_rejected')).toBe(1);
    for (const kind of ['connection', 'locked', 'disk_full', 'io'])
      expect(metricValue(m, 'leasehold_db_errors_total', { kind })).toBe(0);
    // children's CPU and memory, one series per live child
    const live = m.filter((s) => s.name === 'leasehold_child_memory_bytes');
    expect(live.map((s) => s.labels.class).sort()).toEqual(['crash', 'fail', 'hang', 'ok']);
    expect(live.every((s) => childPids.includes(Number(s.labels.pid)))).toBe(true);
    expect(m.filter((s) => s.name === 'leasehold_child_cpu_percent')).toHaveLength(4);
    // prom-client's process metrics, in the supervisor's own registry
    expect(metricValue(m, 'process_resident_memory_bytes')).toBeGreaterThan(0);

    // Shutting down: unhealthy while it drains, metrics still served, then gone.
    const hang = await enqueue(C, 'hang');
    await waitFor('the hang job to run', async () => (await statuses()).get(hang) === 'RUNNING', {
      timeoutMs: 15_000,
      intervalMs: 200,
    });
    sup.signal('SIGTERM');
    const draining = await waitFor(
      '/healthz to say it is shutting down',
      async () => {
        const health = await get(`${base}/healthz`);
        return health.status === 503 ? health : undefined;
      },
      { timeoutMs: 5_000, intervalMs: 50 },
    );
    expect(JSON.parse(draining.body)).toEqual({
      status: 'unavailable',
      dependency: 'supervisor',
      reason: 'shutting down',
    });
    expect((await get(`${base}/metrics`)).status).toBe(200);
    expect(await sup.waitForExit(20_000)).toBe(0);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  it('/metrics shows paused classes and a rate-limited class that waits', async () => {
    const { logFile, config, C } = await setUp({
      http: { port: 0 },
      classes: [
        { name: 'ok', handler: fixture('ok') },
        { name: 'limited', handler: fixture('ok'), rate_limit: { max: 1, per_seconds: 3600 } },
      ],
    });
    for (let n = 0; n < 2; n++) await enqueue(C, 'limited');
    expect((await leasehold([...C, 'pause', 'ok'])).exitCode).toBe(0);
    const sup = await SupervisorRun.start(config, logFile);
    const base = `http://127.0.0.1:${(await sup.waitForEvent('HTTP_LISTENING')).port as number}`;
    const samples = async () => parseMetrics((await get(`${base}/metrics`)).body);
    const scrape = await waitFor('the class waiting', async () => {
      const now = await samples();
      return metricValue(now, 'leasehold_class_rate_limited', { class: 'limited' }) === 1 ? now : undefined;
    });
    // One claim spent the window: its job runs, or, on a loaded machine, its child could not start it within the
    // start margin and handed it back unstarted, the start still spent (docs/concepts/pause-and-rate-limits.md).
    const statuses = (
      await leaseholdJson<{ jobs: { id: number; status: string }[] }>([...C, 'list', '--class', 'limited'])
    ).jobs
      .map((job) => job.status)
      .sort();
    expect([
      ['QUEUED', 'SUCCEEDED'],
      ['QUEUED', 'QUEUED'],
      ['CLAIMED', 'QUEUED'],
      ['QUEUED', 'RUNNING'],
    ]).toContainEqual(statuses);
    expect(metricValue(scrape, 'leasehold_class_paused', { class: 'ok' })).toBe(1);
    expect(metricValue(scrape, 'leasehold_class_paused', { class: 'limited' })).toBe(0);
    expect(metricValue(scrape, 'leasehold_class_rate_window_starts', { class: 'limited' })).toBe(1);
    expect(metricValue(scrape, 'leasehold_class_rate_limited', { class: 'ok' })).toBeUndefined();

    expect((await leasehold([...C, 'resume', 'ok'])).exitCode).toBe(0);
    expect(metricValue(await samples(), 'leasehold_class_paused', { class: 'ok' })).toBe(0);
    expect(await sup.stop()).toBe(0);
  });

  it('runs retention on its interval and logs what it deleted; no HTTP without `http` in the config', async () => {
    const { logFile, config, C } = await setUp({
      // SUCCEEDED jobs go ~1.7 s after they finish; failed ones are kept.
      retention: { succeeded_days: 0.00002, failed_days: 90, cancelled_days: 90, batch_size: 2, interval_seconds: 0.3 },
      classes: [
        { name: 'ok', handler: fixture('ok') },
        { name: 'fail', handler: fixture('fail') },
      ],
    });
    const ok: number[] = [];
    for (let i = 0; i < 3; i++) ok.push(await enqueue(C, 'ok'));
    const fail = await enqueue(C, 'fail');
    const sup = await SupervisorRun.start(config, logFile);

    await waitFor(
      'retention to delete the three succeeded jobs',
      () => sup.events('RETENTION').reduce((total, record) => total + Number(record.succeeded ?? 0), 0) === 3,
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    const logged = sup.events('RETENTION').filter((record) => Number(record.deleted) > 0);
    expect(logged.length).toBeGreaterThan(0);
    expect(
      logged.every(
        (record) => record.level === 'info' && typeof record.duration_ms === 'number' && record.failed === 0,
      ),
    ).toBe(true);
    expect(logged[0]!.msg).toMatch(/^retention deleted \d+ finished job\(s\) with their attempts and events$/);
    for (const id of ok) {
      const shown = await leasehold([...C, 'show', String(id)]);
      expect(shown).toMatchObject({ exitCode: 2, stderr: `leasehold: job ${id} not found` });
    }
    expect((await leaseholdJson<{ job: { status: string } }>([...C, 'show', String(fail)])).job.status).toBe('FAILED');
    expect(sup.events('HTTP_LISTENING')).toEqual([]);
    expect(sup.events('SUPERVISOR_STARTED')[0]).not.toHaveProperty('http_port');
    expect(await sup.stop()).toBe(0);
  });
});

describe('HttpServer', () => {
  it('answers 503 with the reason when the supervisor is unhealthy, and when a scrape fails; stop is safe twice', async () => {
    const logger = createLogger({
      level: 'error',
      file: null,
      maxSizeMb: 1,
      maxFiles: 1,
      supervisorId: 'test',
      console: false,
    });
    const registry = new Registry();
    let reason: Unhealthy | undefined = {
      dependency: 'database',
      reason: 'the database does not answer: disk I/O error',
    };
    let scrapeFails = false;
    const { Gauge } = await import('prom-client');
    new Gauge({
      name: 'test_gauge',
      help: 'fails on demand',
      registers: [registry],
      collect() {
        if (scrapeFails) throw new Error('database is locked');
        this.set(1);
      },
    });
    const server = new HttpServer({ host: '127.0.0.1', port: 0, registry, logger, unhealthy: async () => reason });
    const port = await server.start();
    try {
      const base = `http://127.0.0.1:${port}`;
      expect(await get(`${base}/healthz`)).toMatchObject({
        status: 503,
        body: `${JSON.stringify({ status: 'unavailable', dependency: 'database', reason: 'the database does not answer: disk I/O error' })}\n`,
      });
      reason = undefined;
      expect((await get(`${base}/healthz`)).status).toBe(200);
      expect((await get(`${base}/metrics`)).body).toContain('test_gauge 1');
      scrapeFails = true;
      expect(await get(`${base}/metrics`)).toMatchObject({
        status: 503,
        body: 'metrics unavailable: database is locked\n',
      });
      expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(405);
      // a port that is taken is an error naming it
      await expect(
        new HttpServer({ host: '127.0.0.1', port, registry, logger, unhealthy: async () => undefined }).start(),
      ).rejects.toThrow(new RegExp(`^http: cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
    } finally {
      await server.stop();
      await server.stop();
      await closeLogger(logger);
    }
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });
});
