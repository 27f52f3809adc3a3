/**
 * Each of the library's controls leaves the state its `leasehold` twin
 * leaves. Two databases are seeded alike; each row of the table runs the
 * real CLI on one and the Queue's method on the other, then the two must
 * agree: what the command printed with --json and what the method returned
 * (or the error: exit 2 and its line, the error the method threw), and
 * every row of jobs, attempts, events, class controls and schedules. Times
 * and lease tokens differ by nature, so only whether they are set is
 * compared; the actor must be `cli` on one side and the Queue's
 * (`producer`) on the other.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/open.js';
import { loadConfig } from '../../src/config/load.js';
import { JobStateError, NotFoundError } from '../../src/errors.js';
import { prepareJob } from '../../src/queue/enqueue.js';
import { openQueue, type Queue } from '../../src/queue/queue.js';
import { systemClock } from '../../src/clock.js';
import { claimJobs, completeIfHeld, failIfHeld } from '../helpers/fenced-writes.js';
import { tempDir } from '../helpers/temp.js';
import { fixture, leasehold, writeConfig } from './helpers.js';

const OWNER = 'host-1:100:s1/held.0.1';

interface Seeded {
  queued: number;
  held: number;
  succeeded: number;
  /** FAILED: report UPSTREAM:DOWN, report UPSTREAM:DOWN, report SMTP:REJECTED, other UPSTREAM:DOWN. */
  failed: number[];
}

/** The same jobs in any database: one of each state the controls meet, and a schedule that has run. */
async function seed(database: string): Promise<Seeded> {
  await migrate({ database });
  const queue = await openQueue({ database, actor: 'seed' });
  const { store } = queue;
  try {
    const enqueue = async (cls: string) => (await queue.enqueue({ class: cls, payload: { cls }, maxRetries: 0 })).id;
    // Each class has one QUEUED job at most when it is claimed, so the claim takes that one.
    const claim = async (cls: string) => {
      const [job] = await claimJobs(store, { classes: [cls], ownerId: OWNER, limit: 1, leaseMs: 600_000 });
      return job!.leaseToken;
    };
    const fail = async (cls: string, code: string) => {
      const id = await enqueue(cls);
      const error = { code, detail: `${code} (seeded)`, retryable: false };
      await failIfHeld(store, { id, leaseToken: await claim(cls), error, retryDelayMs: 0 });
      return id;
    };
    const queued = await enqueue('mail');
    const held = await enqueue('held');
    await claim('held');
    const succeeded = await enqueue('report');
    await completeIfHeld(store, { id: succeeded, leaseToken: await claim('report'), result: '{}' });
    const failed = [
      await fail('report', 'UPSTREAM:DOWN'),
      await fail('report', 'UPSTREAM:DOWN'),
      await fail('report', 'SMTP:REJECTED'),
      await fail('other', 'UPSTREAM:DOWN'),
    ];
    const occurrence = prepareJob({ class: 'report', payload: {}, key: 'schedule:nightly@seeded' }, systemClock);
    await store.scheduleAdvance({
      class: 'report',
      name: 'nightly',
      expected: null,
      through: Date.now(),
      jobs: [occurrence],
      actor: 'seed',
    });
    return { queued, held, succeeded, failed };
  } finally {
    await queue.close();
  }
}

const TABLES: [string, string][] = [
  ['jobs', 'id'],
  ['job_attempts', 'job_id, attempt'],
  ['job_events', 'id'],
  ['class_controls', 'class'],
  ['schedules', 'class, name'],
];

async function readRows(database: string): Promise<Record<string, unknown[]>> {
  const rows: Record<string, unknown[]> = {};
  const db = new Database(database, { readonly: true, fileMustExist: true });
  try {
    for (const [table, order] of TABLES) rows[table] = db.prepare(`SELECT * FROM ${table} ORDER BY ${order}`).all();
  } finally {
    db.close();
  }
  return rows;
}

/** Values that depend on when a side ran: compared by whether they are set. */
const WHEN =
  /(_at|At|^ts|^now|^since|_before|_through|^(held|runtime|heartbeat_age|lease_left|next_start_in)_ms|_age_seconds|^per_second)$/;
const ACTOR = /^(actor|.+_by)$/;

/** `value` with its times and tokens reduced to whether they are set, and this side's actor named ACTOR. */
function normalized(value: unknown, actor: string, key = ''): unknown {
  if (typeof value === 'string' && /^[{[]/.test(value)) return normalized(JSON.parse(value), actor, key);
  if (Array.isArray(value)) return value.map((item) => normalized(item, actor));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        // `database`: two files that hold the same rows need not have the same pages.
        key === 'database' ? typeof v : normalized(v, actor, k),
      ]),
    );
  }
  if (value !== null && (WHEN.test(key) || key === 'lease_token')) return 'set';
  // A stats window runs from the start of a minute to when it was read: its whole minutes.
  if (key === 'window_ms' && typeof value === 'number') return `${Math.floor(value / 60_000)} min`;
  if (ACTOR.test(key) && value === actor) return 'ACTOR';
  return value;
}

const state = async (database: string, actor: string) => normalized(await readRows(database), actor);

interface Row {
  name: string;
  cli: (s: Seeded) => string[];
  library: (queue: Queue, s: Seeded) => Promise<unknown>;
  /** What the library's call returned, in part; or the error it threw. */
  expected: Record<string, unknown> | { error: typeof NotFoundError | typeof JobStateError; code: string };
}

const config = () => loadConfig(configFile);
let configFile = '';

/** In order: each row starts from the state the rows before it left, on both sides. */
const ROWS: Row[] = [
  {
    name: 'stats',
    cli: () => ['stats'],
    library: (q) => q.stats({ config: config() }),
    expected: { jobs: expect.objectContaining({ total: expect.objectContaining({ FAILED: 4, total: 8 }) }) },
  },
  {
    name: 'stats --hours 2 --limit 3',
    cli: () => ['stats', '--hours', '2', '--limit', '3'],
    library: (q) => q.stats({ config: config(), windowMs: 2 * 3_600_000, limit: 3 }),
    expected: {
      window_ms: '120 min',
      rate_limits: [expect.objectContaining({ class: 'report', max: 5 })],
    },
  },
  {
    name: 'schedules',
    cli: () => ['schedules'],
    library: (q) => q.schedules(config()),
    expected: { schedules: [expect.objectContaining({ class: 'report', name: 'nightly', last_job_id: 8 })] },
  },
  {
    name: 'cancel of a QUEUED job',
    cli: (s) => ['cancel', String(s.queued)],
    library: (q, s) => q.cancel(s.queued),
    expected: { outcome: 'cancelled', status: 'CANCELLED' },
  },
  {
    name: 'cancel of a CANCELLED job',
    cli: (s) => ['cancel', String(s.queued)],
    library: (q, s) => q.cancel(s.queued),
    expected: { outcome: 'already_cancelled', status: 'CANCELLED' },
  },
  {
    name: 'cancel of a held job',
    cli: (s) => ['cancel', String(s.held)],
    library: (q, s) => q.cancel(s.held),
    expected: { outcome: 'cancel_requested', status: 'CLAIMED' },
  },
  {
    name: 'cancel of a held job again',
    cli: (s) => ['cancel', String(s.held)],
    library: (q, s) => q.cancel(s.held),
    expected: { outcome: 'already_requested' },
  },
  {
    name: 'cancel of a SUCCEEDED job',
    cli: (s) => ['cancel', String(s.succeeded)],
    library: (q, s) => q.cancel(s.succeeded),
    expected: { error: JobStateError, code: 'INVALID_INPUT:NOT_CANCELLABLE' },
  },
  {
    name: 'cancel of no job',
    cli: () => ['cancel', '9999'],
    library: (q) => q.cancel(9999),
    expected: { error: NotFoundError, code: 'NOT_FOUND:JOB' },
  },
  {
    name: 'retry of a FAILED job',
    cli: (s) => ['retry', String(s.failed[0])],
    library: (q, s) => q.retry(s.failed[0]!),
    expected: { outcome: 'queued' },
  },
  {
    name: 'retry of a held job',
    cli: (s) => ['retry', String(s.held)],
    library: (q, s) => q.retry(s.held),
    expected: { error: JobStateError, code: 'INVALID_INPUT:NOT_FAILED' },
  },
  {
    name: 'retry of no job',
    cli: () => ['retry', '9999'],
    library: (q) => q.retry(9999),
    expected: { error: NotFoundError, code: 'NOT_FOUND:JOB' },
  },
  {
    name: 'retry of the FAILED jobs of a class with an error code',
    cli: () => ['retry', '--status', 'FAILED', '--class', 'report', '--error-code', 'UPSTREAM:DOWN'],
    library: (q) => q.retry({ status: 'FAILED', class: 'report', errorCode: 'UPSTREAM:DOWN' }),
    expected: { count: 1 },
  },
  {
    name: 'retry of the FAILED jobs of a class',
    cli: () => ['retry', '--status', 'FAILED', '--class', 'report'],
    library: (q) => q.retry({ status: 'FAILED', class: 'report' }),
    expected: { count: 1 },
  },
  {
    name: 'pause',
    cli: () => ['pause', 'mail'],
    library: (q) => q.pause('mail'),
    expected: { class: 'mail', outcome: 'paused', paused_by: 'ACTOR' },
  },
  {
    name: 'pause again',
    cli: () => ['pause', 'mail'],
    library: (q) => q.pause('mail'),
    expected: { outcome: 'already_paused' },
  },
  {
    name: 'resume',
    cli: () => ['resume', 'mail'],
    library: (q) => q.resume('mail'),
    expected: { class: 'mail', outcome: 'resumed' },
  },
  {
    name: 'resume again',
    cli: () => ['resume', 'mail'],
    library: (q) => q.resume('mail'),
    expected: { outcome: 'not_paused' },
  },
];

const newDir = tempDir('leasehold-library-controls-');

// On SQLite: the controls are one module over the store's methods, whose meaning on both drivers the
// conformance suite holds; a CLI process per row on each driver cost a minute and a half of CI beside the chaos runs.
describe.each([['SQLite', (dir: string, side: string) => join(dir, `${side}.db`)]])(
  'the library and the CLI, on %s',
  (_driver, databaseIn) => {
    let cliDb = '';
    let libDb = '';
    let seeded: Seeded;
    let queue: Queue;

    beforeAll(async () => {
      const dir = newDir();
      cliDb = databaseIn(dir, 'cli');
      libDb = databaseIn(dir, 'library');
      const handler = fixture('ok');
      configFile = writeConfig(join(dir, 'queue.yaml'), {
        database: cliDb,
        logFile: join(dir, 'supervisor.log'),
        retention: { succeeded_days: 7, failed_days: 14, cancelled_days: 3 },
        classes: [
          { name: 'mail', handler },
          { name: 'held', handler },
          {
            name: 'report',
            handler,
            rate_limit: { max: 5, per_seconds: 60 },
            schedules: [{ name: 'nightly', cron: '0 3 * * *' }],
          },
          { name: 'other', handler },
        ],
      });
      seeded = await seed(cliDb);
      expect(await seed(libDb)).toEqual(seeded);
      // The application's config names its classes, as the CLI's --config does: pause and resume take them.
      await migrate({ database: libDb });
      queue = await openQueue({ database: libDb, classes: ['mail', 'held', 'report', 'other'] });
    });

    afterAll(async () => {
      await queue?.close();
    });

    it('starts from the same state on both sides', async () => {
      expect(await state(libDb, 'producer')).toEqual(await state(cliDb, 'cli'));
    });

    it.each(ROWS.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
      const printed = await leasehold(['--config', configFile, ...row.cli(seeded), '--json']);
      const returned = await row.library(queue, seeded).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      if ('error' in row.expected) {
        expect('error' in returned && returned.error).toBeInstanceOf(row.expected.error);
        const error = (returned as { error: Error & { code: string } }).error;
        expect(error.code).toBe(row.expected.code);
        expect(printed).toMatchObject({ exitCode: 2, stdout: '', stderr: `leasehold: ${error.message}` });
      } else {
        expect(printed.stderr).toBe('');
        expect(printed.exitCode).toBe(0);
        if ('error' in returned) throw returned.error;
        const value = normalized(returned.value, 'producer');
        expect(value).toEqual(normalized(JSON.parse(printed.stdout), 'cli'));
        expect(value).toMatchObject(row.expected);
      }
      expect(await state(libDb, 'producer')).toEqual(await state(cliDb, 'cli'));
    });

    it('recorded the Queue actor on its side and `cli` on the other (workers and the seed aside)', async () => {
      const actors = async (database: string) =>
        new Set(((await readRows(database)).job_events as { actor: string }[]).map((e) => e.actor));
      const library = await actors(libDb);
      const cli = await actors(cliDb);
      expect([library.has('producer'), library.has('cli')]).toEqual([true, false]);
      expect([cli.has('cli'), cli.has('producer')]).toEqual([true, false]);
    });
  },
);
