/**
 * Queue.waitFor from a producer process of its own, against a real
 * supervisor, on both drivers: a job that fails twice and then succeeds
 * resolves once, SUCCEEDED; one that spends its retries resolves FAILED
 * with its code; one already ended resolves at once; a timeout and an abort
 * reject. On PostgreSQL, a wait whose listening connection is terminated
 * still resolves.
 */
import { execa, type ResultPromise } from 'execa';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobRow } from '../../src/store/types.js';
import { adminClient, pgUrl, schemaPool } from '../helpers/postgres.js';
import { trackProcess, useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-wait-for-');
const schemas = schemaPool('lh_wait_for');
const PRODUCER = path.resolve('test/fixtures/outcome-producer.mjs');

interface Answer {
  tag?: string;
  id?: number;
  resolved?: JobRow;
  rejected?: { name: string; code?: string; message: string };
  ms?: number;
}

/** The producer process: send it commands, read its answers by tag. */
function producer(database: string, env: Record<string, string> = {}) {
  const child: ResultPromise<{ reject: false; stderr: 'inherit' }> = execa('node', [PRODUCER, database], {
    reject: false,
    stderr: 'inherit',
    env,
  });
  trackProcess(child.pid!, 'outcome producer');
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const answers = () =>
    out
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Answer);
  const send = (command: Record<string, unknown>) => child.stdin.write(`${JSON.stringify(command)}\n`);
  const answer = (tag: string) => waitFor(`the producer's answer ${tag}`, () => answers().find((a) => a.tag === tag));
  return {
    answers,
    send,
    answer,
    async enqueue(tag: string, request: Record<string, unknown>): Promise<number> {
      send({ op: 'enqueue', tag, request });
      return (await answer(tag)).id!;
    },
    /** Stdin ends: it closes its queue and exits. */
    async end(): Promise<void> {
      child.stdin.end();
      await child;
    },
  };
}

describe.each(['sqlite', 'postgres'] as const)('waitFor from a producer process on %s', (driver) => {
  it('retried then SUCCEEDED resolves once; retries spent resolve FAILED with the code; ended at once; timeout, abort, no job', async () => {
    const dir = newDir();
    const database = driver === 'sqlite' ? path.join(dir, 'queue.db') : pgUrl(schemas.next());
    const sup = await startSupervisor({
      dir,
      database,
      classes: [
        { name: 'flaky', handler: 'fails-before', max_retries: 3 },
        { name: 'doomed', handler: 'throws', max_retries: 1 },
      ],
    });
    const app = producer(database);
    await waitFor('the producer to be ready', () => app.answers().some((a) => 'ready' in a));

    const flaky = await app.enqueue('e1', { class: 'flaky', payload: { succeedOn: 3 } });
    app.send({ op: 'wait', tag: 'flaky', id: flaky });
    const doomed = await app.enqueue('e2', { class: 'doomed' });
    app.send({ op: 'wait', tag: 'doomed', id: doomed });

    expect((await app.answer('flaky')).resolved).toMatchObject({ id: flaky, status: 'SUCCEEDED', attempts: 3 });
    expect((await sup.queue.get(flaky))!.attempts.map((a) => a.status)).toEqual(['FAILED', 'FAILED', 'SUCCEEDED']);
    expect((await app.answer('doomed')).resolved).toMatchObject({
      id: doomed,
      status: 'FAILED',
      error_code: 'UPSTREAM:UNAVAILABLE',
      attempts: 2,
    });

    app.send({ op: 'wait', tag: 'again', id: flaky });
    const again = await app.answer('again');
    expect(again.resolved).toMatchObject({ id: flaky, status: 'SUCCEEDED', result: { attempt: 3 } });

    // no child serves this class: it stays QUEUED
    const idle = await app.enqueue('e3', { class: 'unserved' });
    app.send({ op: 'wait', tag: 'timeout', id: idle, timeoutMs: 300 });
    expect((await app.answer('timeout')).rejected).toMatchObject({ name: 'WaitTimeoutError', code: 'TIMEOUT:WAIT' });
    app.send({ op: 'wait', tag: 'abort', id: idle });
    app.send({ op: 'abort', tag: 'abort' });
    expect((await app.answer('abort')).rejected).toMatchObject({ name: 'AbortError' });
    app.send({ op: 'wait', tag: 'nothing', id: 999_999 });
    expect((await app.answer('nothing')).rejected).toMatchObject({ name: 'NotFoundError', code: 'NOT_FOUND:JOB' });

    await app.end();
    // each wait answered exactly once
    const tags = app.answers().flatMap((a) => (a.resolved || a.rejected ? [a.tag] : []));
    expect(tags.sort()).toEqual(['abort', 'again', 'doomed', 'flaky', 'nothing', 'timeout']);
    await sup.stop();
  });
});

describe('waitFor on PostgreSQL', () => {
  it('a wait whose listening connection is terminated mid-wait still resolves, and listens again', async () => {
    const dir = newDir();
    const database = pgUrl(schemas.next());
    const gate = path.join(dir, 'gate');
    const sup = await startSupervisor({ dir, database, classes: [{ name: 'gated', handler: 'waits-for-file' }] });
    const appName = `lh_wait_${process.pid}_${Date.now().toString(36)}`;
    const app = producer(database, { PGAPPNAME: appName });
    await waitFor('the producer to be ready', () => app.answers().some((a) => 'ready' in a));
    const id = await app.enqueue('e', { class: 'gated', payload: { gate } });
    app.send({ op: 'wait', tag: 'gated', id });

    const admin = await adminClient();
    try {
      const listeners = async () =>
        (
          await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [
            `${appName} outcomes`,
          ])
        ).rows.map((row) => row.pid);
      const [listener] = await waitFor('the producer listening for outcomes', async () => {
        const pids = await listeners();
        return pids.length === 1 && pids;
      });
      await sup.waitForJob(id, 'RUNNING');
      await admin.query('SELECT pg_terminate_backend($1)', [listener]);
      await waitFor('the producer listening again, on another connection', async () => {
        const pids = await listeners();
        return pids.length === 1 && pids[0] !== listener;
      });
      expect((await sup.queue.get(id))!.job.status).toBe('RUNNING');
      writeFileSync(gate, '');
      expect((await app.answer('gated')).resolved).toMatchObject({ id, status: 'SUCCEEDED' });
    } finally {
      await admin.end();
    }
    await app.end();
    await sup.stop();
  });
});
