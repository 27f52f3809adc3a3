/**
 * Bad input to `leasehold`: one line on stderr naming what is wrong, exit
 * code 2, and nothing written (the database's rows are the same before and
 * after; a read command does not create a missing database).
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/open.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import {
  copyDatabase,
  fingerprint,
  fixture,
  killLeftovers,
  leasehold,
  leaseholdJson,
  SupervisorRun,
  writeConfig,
} from './helpers.js';
import { badInputCases, caseArgs, type CaseFiles } from './bad-input-cases.js';

const newDir = tempDir('leasehold-bad-');
const files: CaseFiles = { configFile: '', dir: '' };
let golden = '';
const jobIds: number[] = [];

beforeAll(async () => {
  const dir = (files.dir = newDir());
  golden = join(dir, 'queue.db');
  const logFile = join(dir, 'supervisor.log');
  const configFile = (files.configFile = writeConfig(join(dir, 'queue.yaml'), {
    database: golden,
    logFile,
    classes: [{ name: 'ok', handler: fixture('ok') }],
  }));
  await migrate({ database: golden });
  for (let i = 0; i < 3; i++)
    jobIds.push(
      (await leaseholdJson<{ id: number }>(['--config', configFile, 'enqueue', 'ok', '--payload', `{"i":${i}}`])).id,
    );
  const sup = await SupervisorRun.start(configFile, logFile);
  await waitFor(
    'the jobs to succeed',
    async () =>
      (await leaseholdJson<{ jobs: { status: string }[] }>(['--config', configFile, 'list', '--status', 'SUCCEEDED']))
        .jobs.length === 3,
    { timeoutMs: 20_000, intervalMs: 200 },
  );
  expect(await sup.stop()).toBe(0);
  writeFileSync(join(dir, 'not-yaml.yaml'), 'database: "unclosed\n');
  writeFileSync(
    join(dir, 'bad-field.yaml'),
    `database: ./q.db\nclasses:\n  - name: ok\n    handler: ${fixture('ok')}\n    lease_seconds: soon\n`,
  );
  // Each also breaks a cross-field rule (heartbeat under the lease, backoff max over base) that must not add a second line.
  writeFileSync(
    join(dir, 'negative-lease.yaml'),
    `database: ./q.db\nclasses:\n  - name: ok\n    handler: ${fixture('ok')}\n    lease_seconds: -1\n    heartbeat_seconds: 0.5\n`,
  );
  writeFileSync(
    join(dir, 'negative-backoff.yaml'),
    `database: ./q.db\nclasses:\n  - name: ok\n    handler: ${fixture('ok')}\n    backoff: { base_seconds: 5, max_seconds: -1 }\n`,
  );
  writeFileSync(join(dir, 'typo-handler.yaml'), `database: ./q.db\nclasses:\n  - name: ok\n    handler: ./typo.mjs\n`);
  mkdirSync(join(dir, 'folder.yaml'));
  writeFileSync(join(dir, 'big.json'), JSON.stringify({ blob: 'x'.repeat(1024 * 1024) }));
  writeFileSync(
    join(dir, 'bad-line.jsonl'),
    ['{"class":"ok","payload":{"n":1}}', '{"class":"ok","payload":{"n":2}}', '{"class":"nosuch","payload":{}}'].join(
      '\n',
    ),
  );
  writeFileSync(
    join(dir, 'not-json-line.jsonl'),
    ['{"class":"ok","payload":{"n":1}}', '{"class":"ok", payload}'].join('\n'),
  );
  writeFileSync(
    join(dir, 'bad-ref-line.jsonl'),
    ['{"class":"ok","ref":"first"}', '{"class":"ok","depends_on":["frist"]}'].join('\n'),
  );
  writeFileSync(
    join(dir, 'bad-field-line.jsonl'),
    ['{"class":"ok","payload":{"n":1}}', '{"class":"ok","priority":"high"}'].join('\n'),
  );
});

afterAll(async () => {
  // The supervisor run stopped cleanly: nothing of it may be left running.
  expect(await killLeftovers()).toEqual([]);
});

const CASES = badInputCases(files);
const { withConfig, withDb } = caseArgs(files);

describe('bad input: exit 2, one line on stderr, nothing written', () => {
  it.each(CASES)('%s', async (_name, args, message, input) => {
    const db = copyDatabase(golden, join(newDir(), 'copy.db'));
    const before = fingerprint(db);
    const result = await leasehold(args(db), { input });
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toContain('\n');
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(fingerprint(db)).toEqual(before);
  });

  it('the same enqueue with --allow-unknown-class is accepted (and does write)', async () => {
    const db = copyDatabase(golden, join(newDir(), 'copy.db'));
    const before = fingerprint(db);
    const result = await leasehold(withConfig('enqueue', 'nosuch', '--payload', '{}', '--allow-unknown-class')(db));
    expect(result).toMatchObject({ exitCode: 0, stderr: '' });
    expect(result.stdout).toBe(`enqueued job ${Math.max(...jobIds) + 1} (nosuch)`);
    const after = fingerprint(db);
    expect(after.rows.jobs).toBe(before.rows.jobs! + 1);
  });

  it('with --db alone, a class the database has seen is known to list and retry', async () => {
    const db = copyDatabase(golden, join(newDir(), 'copy.db'));
    expect((await leaseholdJson<{ jobs: unknown[] }>(withDb('list', '--class', 'ok')(db))).jobs).toHaveLength(3);
    expect(await leaseholdJson(withDb('retry', '--status', 'FAILED', '--class', 'ok')(db))).toEqual({ count: 0 });
  });

  it('a read command never creates a missing database', async () => {
    const folder = newDir();
    for (const command of [
      ['list'],
      ['show', '1'],
      ['stats'],
      ['workers'],
      ['cancel', '1'],
      ['retry', '1'],
      ['prune'],
      ['sweep'],
    ]) {
      const result = await leasehold(['--db', join(folder, 'nope.db'), ...command]);
      expect(result).toMatchObject({ exitCode: 2, stdout: '' });
      expect(result.stderr).toBe(`leasehold: no database at ${join(folder, 'nope.db')}`);
    }
    expect(readdirSync(folder)).toEqual([]);
  });

  it('neither --config nor --db', async () => {
    const folder = newDir();
    const result = await leasehold(['list'], { cwd: folder });
    expect(result).toMatchObject({
      exitCode: 2,
      stdout: '',
      stderr: 'leasehold: give --config queue.yaml or --db PATH',
    });
    expect(readdirSync(folder)).toEqual([]);
  });

  it('bad input to enqueue does not create the database either', async () => {
    const folder = newDir();
    const database = join(folder, 'new.db');
    const result = await leasehold(['--db', database, 'enqueue', 'ok', '--payload', 'nope', '--allow-unknown-class']);
    expect(result.exitCode).toBe(2);
    expect(existsSync(database)).toBe(false);
    // parents by id live in a database that exists: a new one would hold none of them
    const orphan = await leasehold(['--db', database, 'enqueue', 'ok', '--depends-on', '1', '--allow-unknown-class']);
    expect(orphan).toMatchObject({ exitCode: 2, stdout: '', stderr: `leasehold: no database at ${database}` });
    expect(readdirSync(folder)).toEqual([]);
  });

  it('a database path that cannot be opened is bad input', async () => {
    const folder = newDir();
    writeFileSync(join(folder, 'file'), 'x');
    const result = await leasehold(['--db', join(folder, 'file', 'queue.db'), 'migrate']);
    expect(result).toMatchObject({ exitCode: 2, stdout: '' });
    expect(result.stderr).toMatch(/^leasehold: cannot open the database at .*file\/queue\.db: .+$/);
  });
});
