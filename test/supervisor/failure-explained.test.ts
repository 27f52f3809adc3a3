/**
 * Every failure explained, on a real supervisor: a handler's thrown error
 * keeps its stack (show, show --json, get() and the dashboard's job page),
 * an error nobody caught and a SIGKILL each leave the child's last words on
 * the attempt they end, and a job's own log lines come back in order, with a
 * note when the cap dropped some.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { leasehold, leaseholdJson } from '../cli/helpers.js';
import { serve } from '../dashboard/helpers.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-explained-');
const explained = (extra: Record<string, unknown> = {}) => ({ name: 'pay', handler: 'explained', ...extra });

describe('every failure explained', () => {
  it('a handler that throws from a nested function: show, show --json, get() and the job page name the function and its file', async () => {
    const dir = newDir();
    const sup = await startSupervisor({ dir, classes: [explained()] });
    const { id } = await sup.queue.enqueue({ class: 'pay', payload: { mode: 'nested' } });
    await sup.waitForJob(id, 'FAILED');

    const shown = await leasehold(['show', String(id), '--db', sup.database]);
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toContain('stack trace (attempt 1)');
    expect(shown.stdout).toMatch(/at chargeCardNested \(.*explained\.mjs:\d+:\d+\)/);
    expect(shown.stdout).toContain('Caused by: Error: HTTP 402 from the bank');
    // the message in full, not cut
    expect(shown.stdout).toContain('card declined by the bank for 1250 cents; the bank said: insufficient funds');

    const json = await leaseholdJson<{ attempts: { error_stack: string | null }[] }>([
      'show',
      String(id),
      '--db',
      sup.database,
    ]);
    expect(json.attempts[0]!.error_stack).toMatch(/at chargeCardNested \(.*explained\.mjs:\d+:\d+\)/);

    const details = await sup.queue.get(id);
    expect(details!.attempts[0]!.error_stack).toMatch(/chargeCardNested.*explained\.mjs/);
    expect(details!.logs.map((l) => [l.level, l.message])).toEqual([
      ['info', 'charging the card'],
      ['warn', 'the bank is slow today'],
    ]);

    const withLogs = await leasehold(['show', String(id), '--logs', '--db', sup.database]);
    expect(withLogs.stdout).toMatch(/info\s+charging the card \{"amount":1250\}\n.*warn\s+the bank is slow today/);
    const logs = await leasehold(['logs', String(id), '--db', sup.database]);
    expect(logs.stdout).toMatch(
      /^attempt 1\n.*info\s+charging the card \{"amount":1250\}\n.*warn\s+the bank is slow today$/,
    );

    const dashboard = await serve(sup.database, dir);
    const page = await (await fetch(`${dashboard.base}/jobs/${id}`)).text();
    expect(page).toMatch(/at chargeCardNested \(.*explained\.mjs:\d+:\d+\)/);
    expect(page).toContain('the bank is slow today');
    expect(await sup.stop()).toBe(0);
  });

  it('a handler that throws inside a setTimeout: the attempt records that error, its message and stack', async () => {
    const sup = await startSupervisor({ dir: newDir(), classes: [explained()] });
    const { id } = await sup.queue.enqueue({ class: 'pay', payload: { mode: 'timer' } });
    const { attempts } = await sup.waitForJob(id, 'FAILED');
    expect(attempts.map((a) => a.error_code)).toEqual(['WORKER:CRASHED']);
    expect(attempts[0]!.error_detail).toContain('uncaughtException');
    expect(attempts[0]!.error_detail).toContain('thrown from a timer callback, nobody caught it');
    expect(attempts[0]!.error_stack).toMatch(
      /Error: thrown from a timer callback, nobody caught it\n\s+at Timeout\._onTimeout \(.*explained\.mjs:\d+:\d+\)/,
    );
    const exited = await sup.waitForEvent('CHILD_EXITED', { reason: 'crashed' });
    expect(exited.msg).toContain('thrown from a timer callback');
    expect(await sup.stop()).toBe(0);
  });

  it('a child killed by SIGKILL mid-job: the attempt names the signal, its last resident set and the tail of its stderr', async () => {
    const dir = newDir();
    const readyFile = path.join(dir, 'ready');
    const sup = await startSupervisor({ dir, classes: [explained()] });
    const { id } = await sup.queue.enqueue({ class: 'pay', payload: { mode: 'killed', readyFile } });
    await waitFor('the handler to start', () => existsSync(readyFile), { timeoutMs: 15_000 });
    const pid = Number(readFileSync(readyFile, 'utf8'));
    // The health watch has sampled the child while it ran the job.
    await waitFor(
      'a sample of the child',
      async () => (await sup.children('pay')).some((c) => c.pid === pid && c.memory_bytes !== null && c.job_id === id),
      { timeoutMs: 15_000 },
    );
    await sup.waitForEvent('CHILD_OUTPUT', { pid, stream: 'stderr' });
    process.kill(pid, 'SIGKILL');

    const { attempts } = await sup.waitForJob(id, 'FAILED');
    expect(attempts[0]!.error_code).toBe('WORKER:CRASHED');
    expect(attempts[0]!.error_detail).toContain('signal SIGKILL');
    const story = attempts[0]!.error_stack ?? '';
    expect(story).toContain(`child ${pid} crashed: signal SIGKILL`);
    expect(story).toMatch(/last resident set: [\d.]+ MiB/);
    expect(story).toContain('last words on stderr before the kill');
    expect(await sup.stop()).toBe(0);
  });

  it("a job's own log lines: in order, and past the cap, the note that lines were dropped", async () => {
    const sup = await startSupervisor({ dir: newDir(), classes: [explained()] });
    const { id } = await sup.queue.enqueue({ class: 'pay', payload: { mode: 'chatty', lines: 250 } });
    await sup.waitForJob(id, 'SUCCEEDED');
    const logs = await leasehold(['logs', String(id), '--db', sup.database]);
    expect(logs.exitCode).toBe(0);
    const lines = logs.stdout.split('\n').filter((line) => / info | warn /.test(line));
    expect(lines[0]).toContain('50 earlier lines were dropped');
    expect(lines.slice(1).map((line) => line.trim().split(/\s+/).slice(2).join(' '))).toEqual(
      Array.from({ length: 200 }, (_, i) => `line ${i + 51}`),
    );
    // the supervisor's own log still relays every line
    await waitFor(
      'every line in the supervisor log',
      () => sup.logEvents().filter((e) => e.job_id === id && /^line \d+$/.test(e.msg)).length === 250,
    );
    expect(await sup.stop()).toBe(0);
  });
});
