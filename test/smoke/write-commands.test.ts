/**
 * The `leasehold` binary's writing commands (cancel, retry, prune, sweep,
 * migrate), run as a user runs them, each on a copy of a database produced
 * by a real supervisor run: human output, --json shape, and what is written.
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
import type { ShowJson, StatsJson } from '../cli/json-shapes.js';
import { fresh, newDir, produceSupervisorRun, run } from '../cli/supervisor-run.js';

const LATEST_VERSION = SQLITE_MIGRATIONS[SQLITE_MIGRATIONS.length - 1]!.version;

beforeAll(produceSupervisorRun);

afterAll(async () => {
  // The supervisor run stopped cleanly: nothing of it may be left running.
  expect(await killLeftovers()).toEqual([]);
});
describe("leasehold writes to a copy of a real supervisor run's database", () => {
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
