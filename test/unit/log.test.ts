import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { LeaseholdError } from '../../src/errors.js';
import { closeLogger, createLogger, formatConsoleLine, type LogRecord } from '../../src/log.js';
import { tempDir } from '../helpers/temp.js';

const newDir = tempDir('leasehold-log-');

function readLines(file: string): LogRecord[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as LogRecord);
}

describe('createLogger', () => {
  it('writes JSON lines with ts, level, msg, supervisor_id and the labels given', async () => {
    const file = path.join(newDir(), 'nested', 'supervisor.log');
    const logger = createLogger({
      level: 'info',
      file,
      maxSizeMb: 10,
      maxFiles: 5,
      supervisorId: 'sup-1',
      console: false,
    });
    logger.info('supervisor started');
    const child = logger.child({ class: 'email', pid: 123 });
    child.info('child spawned', { event: 'SPAWNED' });
    child.child({ job_id: 45, attempt: 2 }).warn('job recovered', { event: 'RECOVERED', reason: 'child exited' });
    logger.debug('below the level: not written');
    await closeLogger(logger);

    const lines = readLines(file);
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(Object.keys(line).slice(0, 4)).toEqual(['ts', 'level', 'msg', 'supervisor_id']);
      expect(new Date(line.ts).toISOString()).toBe(line.ts);
      expect(line.supervisor_id).toBe('sup-1');
    }
    expect(lines[0]).toMatchObject({ level: 'info', msg: 'supervisor started' });
    expect(lines[1]).toMatchObject({ msg: 'child spawned', class: 'email', pid: 123, event: 'SPAWNED' });
    expect(lines[2]).toMatchObject({
      level: 'warn',
      msg: 'job recovered',
      class: 'email',
      pid: 123,
      job_id: 45,
      attempt: 2,
      event: 'RECOVERED',
      reason: 'child exited',
    });
    expect(Object.keys(lines[2]!)).not.toContain('message');
  });

  it('serialises errors passed as err with their message and code', async () => {
    const file = path.join(newDir(), 'supervisor.log');
    const logger = createLogger({
      level: 'info',
      file,
      maxSizeMb: 10,
      maxFiles: 5,
      supervisorId: 'sup-1',
      console: false,
    });
    const upstream = Object.assign(new Error('upstream 503'), { code: 'UPSTREAM:UNAVAILABLE' });
    logger.error('attempt failed', { err: upstream, job_id: 7 });
    logger.error('wrapped', { err: new LeaseholdError('INTERNAL:UNHANDLED', 'outer', { cause: upstream }) });
    logger.error(new Error('logged on its own'));
    await closeLogger(logger);

    const [failed, wrapped, alone] = readLines(file);
    expect(failed?.err).toMatchObject({ name: 'Error', message: 'upstream 503', code: 'UPSTREAM:UNAVAILABLE' });
    expect(failed?.job_id).toBe(7);
    expect(wrapped?.err).toMatchObject({
      message: 'outer',
      code: 'INTERNAL:UNHANDLED',
      retryable: true,
      cause: { message: 'upstream 503', code: 'UPSTREAM:UNAVAILABLE' },
    });
    expect(alone).toMatchObject({ msg: 'logged on its own', err: { message: 'logged on its own' } });
  });

  it('rotates by size, keeping the newest lines in the named file', async () => {
    const dir = newDir();
    const file = path.join(dir, 'supervisor.log');
    const logger = createLogger({
      level: 'info',
      file,
      maxSizeMb: 0.001,
      maxFiles: 3,
      supervisorId: 's',
      console: false,
    });
    for (let i = 0; i < 40; i++) logger.info(`line ${i}`);
    await closeLogger(logger);

    expect(fs.readdirSync(dir).sort()).toEqual(['supervisor.log', 'supervisor1.log', 'supervisor2.log']);
    const newest = readLines(file);
    expect(newest.at(-1)?.msg).toBe('line 39');
    for (const name of ['supervisor.log', 'supervisor1.log', 'supervisor2.log']) {
      expect(fs.statSync(path.join(dir, name)).size).toBeLessThanOrEqual(1049);
    }
  });

  it('closes safely twice, and without a file', async () => {
    const file = path.join(newDir(), 'supervisor.log');
    const filed = createLogger({ level: 'info', file, maxSizeMb: 10, maxFiles: 5, supervisorId: 's', console: false });
    filed.info('once');
    await closeLogger(filed);
    await expect(closeLogger(filed)).resolves.toBeUndefined();
    expect(readLines(file).map((line) => line.msg)).toEqual(['once']);

    // Without a file nothing is written anywhere, not even winston's warning about a logger with no transport.
    const complaints: unknown[] = [];
    const spies = [
      vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => complaints.push(chunk) > 0),
      vi.spyOn(console, 'warn').mockImplementation((...args) => void complaints.push(args)),
      vi.spyOn(console, 'error').mockImplementation((...args) => void complaints.push(args)),
    ];
    try {
      const logger = createLogger({
        level: 'info',
        file: null,
        maxSizeMb: 10,
        maxFiles: 5,
        supervisorId: 's',
        console: false,
      });
      logger.info('nowhere');
      await closeLogger(logger);
      await closeLogger(logger);
      expect(logger.writable).toBe(false);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(complaints).toEqual([]);
  });

  it('fails at creation when the log file cannot be written', () => {
    const blocker = path.join(newDir(), 'not-a-folder');
    fs.writeFileSync(blocker, '');
    expect(() =>
      createLogger({
        level: 'info',
        file: path.join(blocker, 'x.log'),
        maxSizeMb: 10,
        maxFiles: 5,
        supervisorId: 's',
        console: false,
      }),
    ).toThrow(/log file .*x\.log: cannot write/);
  });
});

describe('formatConsoleLine', () => {
  it('prints one readable line with every label present', () => {
    const line = formatConsoleLine({
      ts: '2026-11-21T06:12:52.123Z',
      level: 'warn',
      msg: 'child exited',
      supervisor_id: 'sup-1',
      class: 'email',
      pid: 123,
      job_id: 45,
      attempt: 2,
      event: 'KILLED',
      signal: 'SIGKILL',
      reason: 'killed by someone else',
      err: { name: 'LeaseholdError', code: 'WORKER:CRASHED', message: 'child died\nmid-job' },
    });
    expect(line).toBe(
      '2026-11-21T06:12:52.123Z warn  [sup=sup-1 email pid=123 job=45 attempt=2 event=KILLED] child exited ' +
        'signal=SIGKILL reason="killed by someone else" err=WORKER:CRASHED "child died\\nmid-job"',
    );
  });
});
