/**
 * `leasehold logs` without a job id: the supervisor's log file read back,
 * pretty-printed, filtered by class, job and level, and followed as it
 * grows and rotates (a real CLI process, ended by the test).
 */
import { execa } from 'execa';
import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { onCleanup } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { fixture, leasehold, LEASEHOLD_BIN, writeConfig } from './helpers.js';

const newDir = tempDir('leasehold-logs-');
const line = (level: string, msg: string, fields: Record<string, unknown> = {}) =>
  `${JSON.stringify({ ts: '2026-11-26T12:00:00.000Z', level, msg, supervisor_id: 's1', ...fields })}\n`;

describe('leasehold logs (the supervisor log)', () => {
  it('prints the last matching lines, filtered by class, job and level, readable or as JSON', async () => {
    const dir = newDir();
    const file = path.join(dir, 'supervisor.log');
    writeFileSync(
      file,
      line('info', 'spawned', { class: 'email', pid: 7, event: 'CHILD_SPAWNED' }) +
        line('warn', 'job 5 failed', { class: 'email', job_id: 5, attempt: 1, event: 'JOB_RETRY_SCHEDULED' }) +
        'not json at all\n' +
        line('error', 'job 6 dead', { class: 'sms', job_id: 6, event: 'JOB_DEAD_LETTERED' }) +
        line('debug', 'tick', { class: 'email' }),
    );
    const config = writeConfig(path.join(dir, 'queue.yaml'), {
      database: path.join(dir, 'queue.db'),
      logFile: file,
      classes: [{ name: 'email', handler: fixture('succeed') }],
    });

    const email = await leasehold(['logs', '--config', config, '--class', 'email', '--level', 'info']);
    expect(email.exitCode).toBe(0);
    expect(email.stdout.trim().split('\n')).toEqual([
      '2026-11-26T12:00:00.000Z info  [sup=s1 email pid=7 event=CHILD_SPAWNED] spawned',
      '2026-11-26T12:00:00.000Z warn  [sup=s1 email job=5 attempt=1 event=JOB_RETRY_SCHEDULED] job 5 failed',
    ]);
    const job = await leasehold(['logs', '--file', file, '--job', '6', '--json']);
    expect(
      job.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).msg),
    ).toEqual(['job 6 dead']);
    const last = await leasehold(['logs', '--file', file, '--lines', '2']);
    expect(
      last.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('] ')[1]),
    ).toEqual(['job 6 dead', 'tick']);
    const bad = await leasehold(['logs', '--file', file, '--level', 'loud']);
    expect([bad.exitCode, bad.stderr.trim()]).toEqual([
      2,
      'leasehold: --level must be one of error, warn, info, debug, got "loud"',
    ]);
  });

  it('--follow prints each new matching line, across a rotation, until stopped', async () => {
    const dir = newDir();
    const file = path.join(dir, 'supervisor.log');
    writeFileSync(file, line('info', 'before', { class: 'email' }));
    const follow = execa('node', [LEASEHOLD_BIN, 'logs', '--file', file, '--follow', '--class', 'email'], {
      reject: false,
    });
    onCleanup(() => void follow.kill('SIGKILL'));
    let seen = '';
    follow.stdout?.on('data', (chunk: Buffer) => (seen += chunk.toString()));
    await waitFor('the last line so far', () => seen.includes('] before'));

    appendFileSync(file, line('info', 'other class', { class: 'sms' }) + line('warn', 'appended', { class: 'email' }));
    await waitFor('the appended line', () => seen.includes('] appended'));
    // Rotation as the supervisor does it: the file is renamed, a new one begun; a line written just before is not lost.
    appendFileSync(file, line('info', 'last before the rotation', { class: 'email' }));
    renameSync(file, path.join(dir, 'supervisor1.log'));
    writeFileSync(file, line('info', 'first after the rotation', { class: 'email' }));
    await waitFor('the line after the rotation', () => seen.includes('] first after the rotation'));

    follow.kill('SIGINT');
    expect((await follow).exitCode).toBe(0);
    expect(
      seen
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('] ')[1]),
    ).toEqual(['before', 'appended', 'last before the rotation', 'first after the rotation']);
  });
});
