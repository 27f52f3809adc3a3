/**
 * One real supervisor per failure mode of a handler: what the job, its
 * attempts and the log say afterwards, whether the child was replaced, and
 * that no process is left behind (the process guard).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useProcessGuard, waitForExit } from '../helpers/processes.js';
import { startSupervisor, startWithJob, waitForReplacement } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-failures-');

describe('handler failure modes under a real supervisor', () => {
  it('succeed: the job SUCCEEDED with its result, one attempt, and the child stays', async () => {
    const {
      sup,
      first: child,
      id,
    } = await startWithJob(
      newDir(),
      { name: 'ok', handler: 'succeed' },
      { payload: { hello: 'world', say: 'hello from the handler' } },
    );

    const { job, attempts, events } = await sup.waitForJob(id, 'SUCCEEDED');
    expect(job.result).toEqual({ ok: true, echo: { hello: 'world', say: 'hello from the handler' } });
    expect(attempts.map((a) => [a.attempt, a.status, a.error_code])).toEqual([[1, 'SUCCEEDED', null]]);
    expect(job.owner_id).toBe(child?.id);
    expect(events.map((e) => e.event)).toEqual(['ENQUEUED', 'STARTED', 'SUCCEEDED']);
    // the start carries its claim: who claimed the job and when
    expect(JSON.parse(events[1]!.detail ?? '{}')).toEqual({
      attempt: 1,
      owner_id: child?.id,
      claimed_at: job.claimed_at,
    });

    // the same child, not replaced
    expect((await sup.children('ok')).map((c) => c.pid)).toEqual([child?.pid]);
    expect(sup.events('CHILD_EXITED')).toEqual([]);
    // The child writes the outcome before it tells the supervisor, which logs JOB_SUCCEEDED on hearing it.
    await sup.waitForEvent('JOB_SUCCEEDED', { job_id: id });
    expect(sup.events('JOB_SUCCEEDED', { job_id: id }).length).toBe(1);

    // every JSON line has the common fields
    const lines = sup.logEvents();
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(typeof line.ts).toBe('string');
      expect(typeof line.level).toBe('string');
      expect(typeof line.msg).toBe('string');
      expect(line.supervisor_id).toBe(await sup.supervisorId());
    }
    expect(sup.events('SUPERVISOR_STARTED').length).toBe(1);
    expect(sup.events('CHILD_SPAWNED', { class: 'ok', pid: child?.pid }).length).toBe(1);
    expect(sup.events('CHILD_READY', { class: 'ok', pid: child?.pid }).length).toBe(1);
    // what the handler printed is captured under its child's labels
    await sup.waitForEvent('CHILD_OUTPUT', {
      class: 'ok',
      pid: child?.pid,
      stream: 'stdout',
      line: 'hello from the handler',
    });
    await sup.waitForEvent('CHILD_OUTPUT', {
      class: 'ok',
      pid: child?.pid,
      stream: 'stderr',
      line: 'hello from the handler (stderr)',
    });

    expect(await sup.stop()).toBe(0);
    expect(await waitForExit(child!.pid, 2_000)).toBe(true);
  });

  it('throws a coded error: every attempt FAILED with its code, retried, then dead-lettered; the child stays', async () => {
    const {
      sup,
      first: child,
      id,
    } = await startWithJob(
      newDir(),
      { name: 'flaky', handler: 'throws', max_retries: 1 },
      { payload: {}, maxRetries: 1 },
    );

    const { job, attempts } = await sup.waitForJob(id, 'FAILED');
    expect(job.attempts).toBe(2);
    expect(job.error_code).toBe('UPSTREAM:UNAVAILABLE');
    expect(job.error_detail).toContain('upstream is unavailable');
    expect(job.error_detail!.length).toBeLessThanOrEqual(500);
    expect(attempts.map((a) => [a.attempt, a.status, a.error_code])).toEqual([
      [1, 'FAILED', 'UPSTREAM:UNAVAILABLE'],
      [2, 'FAILED', 'UPSTREAM:UNAVAILABLE'],
    ]);

    await sup.waitForEvent('JOB_DEAD_LETTERED', { job_id: id });
    expect(sup.events('JOB_RETRY_SCHEDULED', { job_id: id }).length).toBe(1);
    expect((await sup.children('flaky')).map((c) => c.pid)).toEqual([child?.pid]);
    expect(sup.events('CHILD_EXITED')).toEqual([]);
    await sup.stop();
  });

  it('throws a string: FAILED with INTERNAL:UNHANDLED and the string in the detail', async () => {
    const {
      sup,
      first: child,
      id,
    } = await startWithJob(newDir(), { name: 'str', handler: 'throws-string' }, { payload: {}, maxRetries: 0 });

    const { job, attempts } = await sup.waitForJob(id, 'FAILED');
    expect(job.error_code).toBe('INTERNAL:UNHANDLED');
    expect(job.error_detail).toContain('plain string');
    expect(attempts.map((a) => [a.status, a.error_code])).toEqual([['FAILED', 'INTERNAL:UNHANDLED']]);
    expect(attempts[0]?.error_detail).toContain('plain string');
    expect((await sup.children('str')).map((c) => c.pid)).toEqual([child?.pid]);
    await sup.stop();
  });

  it('a non-retryable error: FAILED after one attempt although retries were left', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ name: 'strict', handler: 'non-retryable', max_retries: 3 }],
    });
    const { id } = await sup.queue.enqueue({ class: 'strict', payload: {}, maxRetries: 3 });

    const { job, attempts } = await sup.waitForJob(id, 'FAILED');
    expect(job.attempts).toBe(1);
    expect(job.error_code).toBe('INVALID_INPUT:BAD_PAYLOAD');
    expect(attempts.map((a) => [a.status, a.error_code])).toEqual([['FAILED', 'INVALID_INPUT:BAD_PAYLOAD']]);
    expect(sup.events('JOB_RETRY_SCHEDULED', { job_id: id })).toEqual([]);
    await sup.stop();
  });

  it("a payload the module's parse refuses: FAILED with INVALID_INPUT:PAYLOAD, no retry; the child serves the next", async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [
        { name: 'parsed', handler: 'parses', max_retries: 3 },
        { name: 'receipt', handler: 'parses-with-zod' },
      ],
    });
    const [child] = await sup.children('parsed');
    const bad = await sup.queue.enqueue({ class: 'parsed', payload: { to: 42 }, maxRetries: 3 });
    const refused = await sup.waitForJob(bad.id, 'FAILED');
    expect(refused.job.attempts).toBe(1);
    expect(refused.job.error_code).toBe('INVALID_INPUT:PAYLOAD');
    expect(refused.job.error_detail).toContain('payload.to must be a string');
    expect(refused.attempts.map((a) => [a.status, a.error_code])).toEqual([['FAILED', 'INVALID_INPUT:PAYLOAD']]);
    expect(refused.attempts[0]?.error_stack).toContain('Caused by: Error: payload.to must be a string');
    expect(sup.events('JOB_RETRY_SCHEDULED', { job_id: bad.id })).toEqual([]);

    // A schema library's refusal (zod, any Standard Schema): one line per issue, each naming its field.
    const invalid = { orderId: '17', email: 'nobody', items: [{ sku: 5 }] };
    const schemaRefused = await sup.waitForJob(
      (await sup.queue.enqueue({ class: 'receipt', payload: invalid })).id,
      'FAILED',
    );
    expect(schemaRefused.job.error_detail).toBe(
      [
        'parse refused the payload:',
        'payload.orderId: Invalid input: expected number, received string',
        'payload.email: Invalid email address',
        'payload.items[0].sku: Invalid input: expected string, received number',
      ].join('\n'),
    );

    const good = await sup.queue.enqueue({ class: 'parsed', payload: { to: ' a@example.com ' } });
    const served = await sup.waitForJob(good.id, 'SUCCEEDED');
    expect(served.job.result).toEqual({ got: { to: 'a@example.com', parsed: true }, pid: child?.pid });
    expect((await sup.children('parsed')).map((c) => c.pid)).toEqual([child?.pid]);
    expect(sup.events('CHILD_EXITED')).toEqual([]);
    await sup.stop();
  });

  it('process.exit(1): the job is taken back as WORKER:CRASHED (exit code 1), retried, and the child replaced', async () => {
    const { sup, first, id } = await startWithJob(
      newDir(),
      { name: 'exits', handler: 'exit', max_retries: 1 },
      { payload: {}, maxRetries: 1 },
    );

    const { job, attempts } = await sup.waitForJob(id, 'FAILED');
    expect(job.attempts).toBe(2);
    expect(job.error_code).toBe('WORKER:CRASHED');
    expect(attempts.map((a) => [a.attempt, a.status, a.error_code])).toEqual([
      [1, 'FAILED', 'WORKER:CRASHED'],
      [2, 'FAILED', 'WORKER:CRASHED'],
    ]);
    expect(attempts[0]?.error_detail).toMatch(/\b1\b/);
    // attempt 2 ran in another child: the one that replaced the first
    expect(attempts[1]?.owner_id).not.toBe(attempts[0]?.owner_id);

    const { dead } = await waitForReplacement(sup, 'exits', first!.pid);
    expect(dead.exit_code).toBe(1);
    expect(dead.exit_signal).toBeNull();

    const exited = await sup.waitForEvent('CHILD_EXITED', { class: 'exits', pid: first!.pid });
    expect(exited.exit_code).toBe(1);
    expect(typeof exited.reason).toBe('string');
    const scheduled = await sup.waitForEvent('CHILD_RESTART_SCHEDULED', { class: 'exits' });
    expect(typeof scheduled.delay_ms).toBe('number');
    // one line per crash: the first sent the job back to the queue (JOB_RECOVERED), the second
    // failed it for good (logged as the dead letter it is, with the same fields)
    const recoveries = () =>
      sup
        .logEvents()
        .filter(
          (r) =>
            (r.event === 'JOB_RECOVERED' || r.event === 'JOB_DEAD_LETTERED') && r.job_id === id && r.code !== undefined,
        );
    const recovered = await waitFor('two recovery lines', () => (recoveries().length >= 2 ? recoveries() : undefined), {
      timeoutMs: 5_000,
    }).catch(() => recoveries());
    expect(recovered.map((r) => [r.event, r.code, r.outcome])).toEqual([
      ['JOB_RECOVERED', 'WORKER:CRASHED', 'QUEUED'],
      ['JOB_DEAD_LETTERED', 'WORKER:CRASHED', 'FAILED'],
    ]);
    await sup.stop();
  });

  it('crash once: attempt 1 kills its child, attempt 2 runs in another child and succeeds', async () => {
    const dir = newDir();
    const markFile = path.join(dir, 'runs.jsonl');
    const sup = await startSupervisor({ dir, classes: [{ name: 'once', handler: 'crash-once', max_retries: 2 }] });
    const [first] = await sup.children('once');
    const { id } = await sup.queue.enqueue({ class: 'once', payload: { markFile }, maxRetries: 2 });

    const { job, attempts } = await sup.waitForJob(id, 'SUCCEEDED');
    expect(attempts.map((a) => [a.attempt, a.status, a.error_code])).toEqual([
      [1, 'FAILED', 'WORKER:CRASHED'],
      [2, 'SUCCEEDED', null],
    ]);
    const result = job.result as { pid: number };
    expect(result.pid).not.toBe(first?.pid);
    expect(attempts[1]?.owner_id).not.toBe(attempts[0]?.owner_id);
    await waitForReplacement(sup, 'once', first!.pid);
    await sup.stop();
  });

  it('a replacement child runs with the config its supervisor started with, though queue.yaml changed since', async () => {
    const dir = newDir();
    const markFile = path.join(dir, 'runs.jsonl');
    const sup = await startSupervisor({ dir, classes: [{ name: 'once', handler: 'crash-once', max_retries: 2 }] });
    const [first] = await sup.children('once');
    // An edit the supervisor has not loaded: a child that read the file again could not start.
    writeFileSync(
      sup.configFile,
      readFileSync(sup.configFile, 'utf8').replace(/handler: .*crash-once\.mjs/, 'handler: ./no-such-handler.mjs'),
    );
    const { id } = await sup.queue.enqueue({ class: 'once', payload: { markFile }, maxRetries: 2 });

    const { attempts } = await sup.waitForJob(id, 'SUCCEEDED');
    expect(attempts.map((a) => [a.attempt, a.status, a.error_code])).toEqual([
      [1, 'FAILED', 'WORKER:CRASHED'],
      [2, 'SUCCEEDED', null],
    ]);
    await waitForReplacement(sup, 'once', first!.pid);
    expect(sup.events('CLASS_DISABLED')).toEqual([]);
    await sup.stop();
  });

  it('process.abort(): WORKER:CRASHED naming SIGABRT, and the child replaced', async () => {
    const { sup, first, id } = await startWithJob(
      newDir(),
      { name: 'aborts', handler: 'abort' },
      { payload: {}, maxRetries: 0 },
    );

    const { job, attempts } = await sup.waitForJob(id, 'FAILED');
    expect(job.error_code).toBe('WORKER:CRASHED');
    expect(attempts.map((a) => [a.status, a.error_code])).toEqual([['FAILED', 'WORKER:CRASHED']]);
    expect(attempts[0]?.error_detail).toContain('SIGABRT');

    const { dead } = await waitForReplacement(sup, 'aborts', first!.pid);
    expect(dead.exit_signal).toBe('SIGABRT');
    const exited = await sup.waitForEvent('CHILD_EXITED', { class: 'aborts', pid: first!.pid });
    expect(exited.exit_signal).toBe('SIGABRT');
    await sup.stop();
  });

  it('a job that kills its child three times in a row is failed as poison (WORKER:POISON), though retries were left', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ name: 'poison', handler: 'exit', max_retries: 10 }],
    });
    const { id } = await sup.queue.enqueue({ class: 'poison', payload: {}, maxRetries: 10 });

    const { job, attempts } = await sup.waitForJob(id, 'FAILED', 30_000);
    expect(job.error_code).toBe('WORKER:POISON');
    expect(job.attempts).toBe(3);
    expect(attempts.map((a) => a.status)).toEqual(['FAILED', 'FAILED', 'FAILED']);
    expect(attempts.slice(0, 2).map((a) => a.error_code)).toEqual(['WORKER:CRASHED', 'WORKER:CRASHED']);
    expect(['WORKER:CRASHED', 'WORKER:POISON']).toContain(attempts[2]?.error_code);
    // the class keeps a child: the third crash was the job's fault, not a crash loop
    await sup.waitForChildren('poison', 1);
    expect(sup.events('CRASH_LOOP')).toEqual([]);
    await sup.stop();
  });
});
