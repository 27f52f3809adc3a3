/**
 * `leasehold pause` / `resume`, and what `stats`, `workers` and
 * `supervise --check-config` say about paused and rate-limited classes, run
 * as a user runs them. A worker's rate-limited claim is made through the store.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { migrate, openStore } from '../../src/store/open.js';
import { tempDir } from '../helpers/temp.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { fingerprint, fixture, leasehold, leaseholdJson, SUPERVISE_BIN, writeConfig } from './helpers.js';

const newDir = tempDir('leasehold-pause-cli-');
let configFile = '';
let database = '';
const C = () => ['--config', configFile];

beforeAll(async () => {
  const dir = newDir();
  database = join(dir, 'queue.db');
  configFile = writeConfig(join(dir, 'queue.yaml'), {
    database,
    logFile: join(dir, 'supervisor.log'),
    classes: [
      { name: 'ok', handler: fixture('ok') },
      { name: 'limited', handler: fixture('ok'), rate_limit: { max: 1, per_seconds: 3600 } },
    ],
  });
  await migrate({ database });
  for (const cls of ['ok', 'limited', 'limited']) await leaseholdJson([...C(), 'enqueue', cls, '--payload', '{}']);
});

describe('pause and resume', () => {
  it('pause, pause again, resume, resume again: exit 0 each, said in words and in JSON', async () => {
    const paused = await leasehold([...C(), 'pause', 'ok']);
    expect(paused).toMatchObject({ exitCode: 0, stderr: '' });
    expect(paused.stdout).toBe('class ok paused: no job of it starts until `resume ok` (running jobs finish)');
    const again = await leasehold([...C(), 'pause', 'ok']);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toMatch(/^class ok was already paused \(since \d{4}-\d\d-\d\d [\d:]+Z \(.+ ago\), by cli\)$/);
    const json = await leaseholdJson<{ class: string; outcome: string; paused_at: number; paused_by: string }>([
      ...C(),
      'pause',
      'ok',
    ]);
    expect(json).toMatchObject({ class: 'ok', outcome: 'already_paused', paused_by: 'cli' });
    expect(json.paused_at).toBeGreaterThan(0);

    const workers = await leaseholdJson<{ paused: { class: string; paused_by: string }[] }>([...C(), 'workers']);
    expect(workers.paused).toMatchObject([{ class: 'ok', paused_by: 'cli' }]);
    expect((await leasehold([...C(), 'workers'])).stdout).toMatch(
      /^class ok paused since .+ by cli: its workers claim nothing until resumed$/m,
    );
    const stats = await leaseholdJson<{ paused: { class: string }[] }>([...C(), 'stats']);
    expect(stats.paused.map((row) => row.class)).toEqual(['ok']);
    const statsText = (await leasehold([...C(), 'stats'])).stdout;
    expect(statsText).toMatch(/^ok \(paused\) /m);
    expect(statsText).toMatch(/^ok +paused since .+ by cli: claims nothing until resumed$/m);

    expect(await leaseholdJson([...C(), 'resume', 'ok'])).toEqual({ class: 'ok', outcome: 'resumed' });
    expect(await leasehold([...C(), 'resume', 'ok'])).toMatchObject({ exitCode: 0, stdout: 'class ok was not paused' });
    expect((await leaseholdJson<{ paused: unknown[] }>([...C(), 'stats'])).paused).toEqual([]);
  });

  it('a class paused and then dropped from the config can still be resumed, also with --db alone', async () => {
    const store = await openStore(database);
    try {
      await store.classPause({ class: 'retired', actor: 'test' });
    } finally {
      await store.close();
    }
    expect(await leaseholdJson(['--db', database, 'resume', 'retired'])).toEqual({
      class: 'retired',
      outcome: 'resumed',
    });
  });

  it('a class no config or supervisor has named: exit 2, one line with the closest name, nothing written', async () => {
    const before = fingerprint(database);
    for (const command of ['pause', 'resume']) {
      const result = await leasehold([...C(), command, 'limitd']);
      expect(result).toMatchObject({ exitCode: 2, stdout: '' });
      expect(result.stderr).toBe(
        'leasehold: unknown class "limitd": no config or supervisor has named it (did you mean "limited"?)',
      );
    }
    // Without the config, a class no supervisor has served and none has paused yet.
    expect(await leasehold(['--db', database, 'pause', 'limited'])).toMatchObject({
      exitCode: 2,
      stderr: 'leasehold: unknown class "limited": no config or supervisor has named it',
    });
    expect(fingerprint(database)).toEqual(before);
  });
});

describe('rate limits', () => {
  it('stats says when a rate-limited class waits, and when its next start is allowed', async () => {
    const idle = await leaseholdJson<{ rate_limits: unknown[] }>([...C(), 'stats']);
    expect(idle.rate_limits).toEqual([
      {
        class: 'limited',
        max: 1,
        per_seconds: 3600,
        started: 0,
        waiting: false,
        next_start_at: null,
        next_start_in_ms: null,
      },
    ]);

    // a worker of the class takes the one start of its hour; a second job is due
    const store = await openStore(database);
    try {
      const claimed = await claimJobs(store, {
        classes: ['limited'],
        ownerId: 'w',
        limit: 5,
        leaseMs: 30_000,
        rateLimit: { max: 1, perMs: 3_600_000 },
      });
      expect(claimed).toHaveLength(1);
    } finally {
      await store.close();
    }
    const stats = await leaseholdJson<{
      now: number;
      rate_limits: { waiting: boolean; started: number; next_start_in_ms: number }[];
    }>([...C(), 'stats']);
    expect(stats.rate_limits).toMatchObject([{ class: 'limited', started: 1, waiting: true }]);
    expect(stats.rate_limits[0]!.next_start_in_ms).toBeGreaterThan(3_500_000);
    const text = (await leasehold([...C(), 'stats'])).stdout;
    expect(text).toMatch(/^limited \(rate limited\) /m);
    expect(text).toMatch(/^limited +rate limited: 1 per 3600s, next start in 3\d\d\ds$/m);
  });

  it('a rate limit of 0: supervise --check-config and every command exit 2 with one line naming it', async () => {
    const dir = newDir();
    const bad = join(dir, 'bad.yaml');
    writeFileSync(
      bad,
      `database: ./q.db\nclasses:\n  - name: ok\n    handler: ${fixture('ok')}\n    rate_limit: { max: 0, per_seconds: 1 }\n`,
    );
    const expected = `${bad}: classes[0].rate_limit.max: expected an integer > 0, got 0`;
    const checked = await execa('node', [SUPERVISE_BIN, '--config', bad, '--check-config'], { reject: false });
    expect({ exitCode: checked.exitCode, stderr: checked.stderr }).toEqual({
      exitCode: 2,
      stderr: `supervise: ${expected}`,
    });
    expect(await leasehold(['--config', bad, 'stats'])).toMatchObject({
      exitCode: 2,
      stderr: `leasehold: ${expected}`,
    });
    const good = join(dir, 'good.yaml');
    writeFileSync(
      good,
      `database: ./q.db\nclasses:\n  - name: ok\n    handler: ${fixture('ok')}\n    rate_limit: { max: 10, per_seconds: 0.5 }\n`,
    );
    expect(await execa('node', [SUPERVISE_BIN, '--config', good, '--check-config'], { reject: false })).toMatchObject({
      exitCode: 0,
    });
  });
});
