/**
 * leasehold_enqueue(), the SQL twin of the library's enqueue, on the real
 * server: each request the library refuses, the function refuses with the
 * same code and wording; what it accepts, it writes as the library does.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/open.js';
import { systemClock } from '../../src/clock.js';
import { prepareJob, type EnqueueRequest } from '../../src/queue/enqueue.js';
import { DEFAULT_PAYLOAD_LIMIT_BYTES } from '../../src/limits.js';
import { openQueue, type Queue } from '../../src/queue/queue.js';
import { PG_URL, pgUrl, schemaPool } from '../helpers/postgres.js';
import { claimJobs } from '../helpers/fenced-writes.js';

const schemas = schemaPool('lh_enqueue_fn');

/** The same request, as the library takes it and as the function's options. */
const REFUSED: { what: string; request: EnqueueRequest; payload?: unknown; options: Record<string, unknown> }[] = [
  { what: 'an empty class', request: { class: ' ' }, options: {} },
  { what: 'a fractional priority', request: { class: 'c', priority: 1.5 }, options: { priority: 1.5 } },
  { what: 'a priority too high', request: { class: 'c', priority: 2_000_000 }, options: { priority: 2_000_000 } },
  { what: 'negative max_retries', request: { class: 'c', maxRetries: -1 }, options: { max_retries: -1 } },
  { what: 'an empty key', request: { class: 'c', key: '' }, options: { key: '' } },
  { what: 'a key too long', request: { class: 'c', key: 'k'.repeat(256) }, options: { key: 'k'.repeat(256) } },
  { what: 'a negative delay', request: { class: 'c', delay: -1 }, options: { delay_seconds: -1 } },
  { what: 'delay and run_at', request: { class: 'c', delay: 1, runAt: 5 }, options: { delay_seconds: 1, run_at: 5 } },
  { what: 'a negative run_at', request: { class: 'c', runAt: -5 }, options: { run_at: -5 } },
  {
    what: 'a key scope without a key',
    request: { class: 'c', keyScope: 'incomplete' },
    options: { key_scope: 'incomplete' },
  },
  {
    what: 'an unknown key scope',
    request: { class: 'c', key: 'k', keyScope: 'job' as 'row' },
    options: { key: 'k', key_scope: 'job' },
  },
  {
    what: 'a key lifetime of 0',
    request: { class: 'c', key: 'k', keyTtlSeconds: 0 },
    options: { key: 'k', key_ttl_seconds: 0 },
  },
  {
    what: 'an unknown parent failure policy',
    request: { class: 'c', onParentFailure: 'skip' as 'run' },
    options: { on_parent_failure: 'skip' },
  },
  {
    what: 'a payload too large',
    request: { class: 'c', payload: 'x'.repeat(DEFAULT_PAYLOAD_LIMIT_BYTES) },
    options: {},
  },
];

describe('leasehold_enqueue()', () => {
  let schema: string;
  let queue: Queue;
  let sql: pg.Client;

  beforeAll(async () => {
    schema = schemas.next();
    await migrate({ database: pgUrl(schema) });
    queue = await openQueue({ database: pgUrl(schema), unknownClass: 'ignore' });
    sql = new pg.Client({ connectionString: PG_URL }); // the server's default search_path: not the queue's schema
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await queue?.close();
  });

  const enqueue = (cls: string, payload: unknown, options: Record<string, unknown>) =>
    sql.query<{ id: string }>(`SELECT ${schema}.leasehold_enqueue($1, $2::jsonb, $3::jsonb) AS id`, [
      cls,
      JSON.stringify(payload),
      JSON.stringify(options),
    ]);

  it.each(REFUSED)('refuses $what as the library does', async ({ request, options }) => {
    let library: Error | undefined;
    try {
      prepareJob(request, systemClock);
    } catch (error) {
      library = error as Error & { code: string };
    }
    expect(library).toBeDefined();
    const { code, message } = library as Error & { code: string };
    const refusal = enqueue(request.class, request.payload ?? null, options);
    // The wording after "got" is each side's rendering of the value; the code and the rule are the same.
    await expect(refusal).rejects.toMatchObject({ code: '22023', message: expect.stringContaining(code) });
    await expect(refusal).rejects.toMatchObject({ message: expect.stringContaining(message.split(', got')[0]!) });
  });

  it('enqueues a dependent of existing jobs, WAITING until they end, and a key free once its job ended', async () => {
    const parent = await queue.enqueue({ class: 'c' });
    const { rows } = await enqueue('c', {}, { depends_on: [parent.id], on_parent_failure: 'run' });
    const dependent = Number(rows[0]!.id);
    expect((await queue.get(dependent))?.job.status).toBe('WAITING');
    expect((await queue.store.jobParents({ id: dependent })).map((p) => p.id)).toEqual([parent.id]);
    await expect(enqueue('c', {}, { depends_on: [dependent + 1000] })).rejects.toMatchObject({
      code: '22023',
      message: `INVALID_INPUT:DEPENDS_ON: job ${dependent + 1000} does not exist`,
    });
    await expect(enqueue('c', {}, { depends_on: ['x'] })).rejects.toThrow('INVALID_INPUT:DEPENDS_ON');
    const first = Number((await enqueue('c', {}, { key: 'once', key_scope: 'incomplete' })).rows[0]!.id);
    expect(Number((await enqueue('c', {}, { key: 'once' })).rows[0]!.id)).toBe(first);
    expect(await queue.cancel(first)).toMatchObject({ outcome: 'cancelled' });
    expect(Number((await enqueue('c', {}, { key: 'once', key_ttl_seconds: 60 })).rows[0]!.id)).not.toBe(first);
  });

  it('stores the caller’s trace context (traceparent) for the job’s attempts, refusing one that is not W3C', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 vendor=abc';
    const id = Number((await enqueue('traced', {}, { traceparent })).rows[0]!.id);
    const [claimed] = await claimJobs(queue.store, { classes: ['traced'], ownerId: 'test', limit: 1, leaseMs: 30_000 });
    expect(claimed).toMatchObject({ id, traceparent });
    await expect(enqueue('traced', {}, { traceparent: 'not-a-trace' })).rejects.toThrow('INVALID_INPUT:TRACEPARENT');
  });

  it('refuses an option it does not know, naming it', async () => {
    await expect(enqueue('c', {}, { priorty: 3 })).rejects.toThrow('INVALID_INPUT:OPTIONS: unknown option "priorty"');
  });

  it('writes the row, its ENQUEUED event and the wake-up as the library does', async () => {
    const listener = new pg.Client({ connectionString: PG_URL });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (message) => heard.push(message.payload ?? ''));
    await listener.query('LISTEN leasehold_jobs');
    try {
      const before = Date.now();
      const id = Number(
        (await enqueue('email', { to: 'a' }, { priority: 3, delay_seconds: 60, key: 'k1' })).rows[0]!.id,
      );
      const again = Number((await enqueue('email', { to: 'b' }, { key: 'k1' })).rows[0]!.id);
      expect(again).toBe(id);
      const runAt = Date.parse('2030-01-01T00:00:00Z');
      const atTime = Number(
        (await enqueue('email', null, { run_at: '2030-01-01T00:00:00Z', max_retries: 0 })).rows[0]!.id,
      );
      const details = await queue.get(id);
      expect(details?.job).toMatchObject({
        class: 'email',
        status: 'QUEUED',
        payload: { to: 'a' },
        priority: 3,
        idempotency_key: 'k1',
        max_retries_from_class: 1,
      });
      expect(details!.job.run_at - before).toBeGreaterThanOrEqual(59_000);
      expect(details?.events.map((e) => [e.event, e.actor])).toEqual([['ENQUEUED', 'sql:postgres']]);
      expect((await queue.get(atTime))?.job).toMatchObject({
        run_at: runAt,
        max_retries: 0,
        max_retries_from_class: 0,
      });
      await listener.query('SELECT 1');
      expect(heard.filter((h) => h === `${schema}:email`)).toHaveLength(2);
    } finally {
      await listener.end();
    }
  });

  it('warns (RAISE WARNING) of a class never served while others were, as the library does, and writes the job', async () => {
    await queue.store.workerRegister({
      id: 'h:1:aa/send-receipt.0.1',
      kind: 'child',
      host: 'h',
      supervisorId: 'h:1:aa',
      pid: 1,
      class: 'send-receipt',
      state: 'ready',
      restarts: 0,
    });
    const notices: { severity?: string; message?: string }[] = [];
    const onNotice = (notice: { severity?: string; message?: string }) => notices.push(notice);
    sql.on('notice', onNotice);
    try {
      const id = Number((await enqueue('send-reciept', {}, {})).rows[0]!.id);
      await enqueue('send-receipt', {}, {});
      expect(notices.map((notice) => [notice.severity, notice.message])).toEqual([
        [
          'WARNING',
          'class "send-reciept" has never been served: the supervisors on this database have served send-receipt (a typo, or a class in no config yet?)',
        ],
      ]);
      expect(await queue.get(id)).toMatchObject({ job: { class: 'send-reciept', status: 'QUEUED' } });
    } finally {
      sql.off('notice', onNotice);
    }
  });

  it('commits or rolls back with the caller', async () => {
    await sql.query('BEGIN');
    const id = Number((await enqueue('email', {}, {})).rows[0]!.id);
    await sql.query('ROLLBACK');
    expect(await queue.get(id)).toBeUndefined();
  });
});
