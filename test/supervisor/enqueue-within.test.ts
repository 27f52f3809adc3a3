/**
 * An application process enqueues inside its own transaction while a real
 * supervisor serves the class, on both drivers: a rollback leaves no job and
 * no run; a commit runs the job once, after the commit; an application killed
 * before its commit leaves nothing. And leasehold_enqueue() from psql.
 */
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PG_URL, pgUrl, schemaPool } from '../helpers/postgres.js';
import { trackProcess, useProcessGuard } from '../helpers/processes.js';
import { startSupervisor, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { holdsFor, waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-enqueue-within-');
const schemas = schemaPool('lh_app_tx');
const APP = path.resolve('test/fixtures/app-transaction.mjs');
const POLL_SECONDS = 0.5;

interface Setup {
  sup: SupervisorHandle;
  database: string;
  effectsFile: string;
  appSchema?: string;
}

async function serve(driver: 'sqlite' | 'postgres'): Promise<Setup> {
  const dir = newDir();
  const effectsFile = path.join(dir, 'effects.jsonl');
  writeFileSync(effectsFile, '');
  const classes = [{ name: 'email', handler: 'effects', poll_seconds: POLL_SECONDS }];
  if (driver === 'sqlite') {
    const database = path.join(dir, 'queue.db');
    const sup = await startSupervisor({ dir, database, classes });
    const app = new Database(database);
    app.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL)');
    app.close();
    return { sup, database, effectsFile };
  }
  const database = pgUrl(schemas.next());
  const appSchema = schemas.next();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${appSchema}; CREATE TABLE ${appSchema}.orders (id serial PRIMARY KEY, item text)`);
  await admin.end();
  return { sup: await startSupervisor({ dir, database, classes }), database, effectsFile, appSchema };
}

/** The application process, and its stdout lines as they come. */
function application(setup: Setup, mode: 'commit' | 'rollback' | 'hang') {
  const args = [APP, setup.database, setup.effectsFile, mode, ...(setup.appSchema ? [setup.appSchema] : [])];
  const child = execa('node', args, { reject: false, stdin: 'ignore', stderr: 'inherit' });
  trackProcess(child.pid!, `application ${mode}`);
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const line = (prefix: string) =>
    waitFor(`the application to print "${prefix}"`, () =>
      out
        .split('\n')
        .find((l) => l.startsWith(prefix))
        ?.slice(prefix.length + 1),
    );
  return { child, line };
}

const starts = (setup: Setup) =>
  readFileSync(setup.effectsFile, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { kind: string; id: number; ts: number })
    .filter((e) => e.kind === 'start');

/** Three of the class's poll intervals: long enough for an idle child to have claimed a visible job. */
const THREE_POLLS_MS = 3 * POLL_SECONDS * 1000;

describe.each(['sqlite', 'postgres'] as const)('an application transaction on %s', (driver) => {
  it('rolled back: no job row and no run; committed: one run, after the commit; killed: nothing', async () => {
    const setup = await serve(driver);
    const { sup } = setup;

    const rolledBack = application(setup, 'rollback');
    const rolledBackId = Number(await rolledBack.line('enqueued'));
    await rolledBack.child;
    await holdsFor(
      'no job row and no run after the rollback',
      async () => (await sup.queue.list()).length === 0 && starts(setup).length === 0,
      {
        forMs: THREE_POLLS_MS,
      },
    );
    expect(await sup.queue.get(rolledBackId)).toBeUndefined();

    const committed = application(setup, 'commit');
    const id = Number(await committed.line('enqueued'));
    const endingAt = Number(await committed.line('ending'));
    await sup.waitForJob(id, 'SUCCEEDED');
    await committed.child;
    expect(starts(setup)).toEqual([expect.objectContaining({ id })]);
    expect(starts(setup)[0]!.ts).toBeGreaterThanOrEqual(endingAt);

    const killed = application(setup, 'hang');
    const killedId = Number(await killed.line('enqueued'));
    killed.child.kill('SIGKILL');
    await killed.child;
    await holdsFor(
      'no other job and no other run after the kill',
      async () => (await sup.queue.list()).length === 1 && starts(setup).length === 1,
      {
        forMs: THREE_POLLS_MS,
      },
    );
    expect(await sup.queue.get(killedId)).toBeUndefined();
    await sup.stop();
  });
});

describe('leasehold_enqueue() from psql', () => {
  it('rolls back to nothing, commits one run, and names the bad field', async () => {
    const setup = await serve('postgres');
    const schema = new URL(setup.database).searchParams.get('schema')!;
    const psql = (sql: string) =>
      execa('psql', [PG_URL, '-X', '-q', '-t', '-A', '-v', 'ON_ERROR_STOP=1', '-c', sql], { reject: false });
    const payload = `'${JSON.stringify({ effectsFile: setup.effectsFile, ms: 10 })}'`;
    const call = (options = "'{}'") => `SELECT ${schema}.leasehold_enqueue('email', ${payload}, ${options})`;

    const rolledBack = await psql(`BEGIN; ${call()}; ROLLBACK;`);
    expect(rolledBack.exitCode).toBe(0);
    const committed = await psql(`BEGIN; ${call(`'{"priority": 5}'`)}; COMMIT;`);
    expect(committed.exitCode).toBe(0);
    const id = Number(committed.stdout.trim());
    expect(Number(rolledBack.stdout.trim())).toBeLessThan(id);
    const done = await setup.sup.waitForJob(id, 'SUCCEEDED');
    expect(done.job.priority).toBe(5);
    expect(await setup.sup.queue.get(Number(rolledBack.stdout.trim()))).toBeUndefined();
    expect(starts(setup)).toEqual([expect.objectContaining({ id })]);

    const badOption = await psql(call(`'{"priority": "high"}'`));
    expect(badOption.exitCode).not.toBe(0);
    expect(badOption.stderr).toContain('INVALID_INPUT:PRIORITY: priority must be an integer');
    const tooLarge = await psql(`SELECT ${schema}.leasehold_enqueue('email', to_jsonb(repeat('x', 1100000)))`);
    expect(tooLarge.stderr).toContain('INVALID_INPUT:PAYLOAD_TOO_LARGE: payload is 1100002 bytes');
    await setup.sup.stop();
  });
});
