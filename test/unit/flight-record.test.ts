/**
 * The flight recorder's file, written and read through real files: what the
 * child records is what the supervisor reads, an emptied slot reads as
 * nothing, a record being written is never read half old and half new, and
 * what a dead supervisor left is removed.
 */
import { spawn } from 'node:child_process';
import { existsSync, openSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FLIGHT_FILE_PREFIX,
  FlightRecorder,
  FlightRecordFile,
  RECORD_BYTES,
  removeOrphanFlightFiles,
} from '../../src/ipc/flight-record.js';
import { isPidAlive } from '../../src/pids.js';

const files: FlightRecordFile[] = [];
afterEach(() => {
  for (const file of files.splice(0)) file.remove();
});

function newFile(slots: number): FlightRecordFile {
  const file = new FlightRecordFile(`test/flight.${process.hrtime.bigint()}`, slots);
  files.push(file);
  return file;
}

const job = (jobId: number, attempt = 1) => ({
  jobId,
  attempt,
  leaseToken: `${jobId}`.padStart(32, 'f'),
  startedAt: 1_700_000_000_000 + jobId,
});

describe('flight recorder', () => {
  it('reads back what each slot recorded, and nothing for an emptied or unused slot', () => {
    const file = newFile(4);
    const recorder = new FlightRecorder(file.path);
    expect(file.read()).toEqual([]);
    recorder.started(0, job(7));
    recorder.started(2, job(9, 3));
    expect(file.read()).toEqual([
      { slot: 0, ...job(7) },
      { slot: 2, ...job(9, 3) },
    ]);
    recorder.idle(0);
    recorder.started(2, job(11));
    expect(file.read()).toEqual([{ slot: 2, ...job(11) }]);
    recorder.close();
  });

  it('keeps the loop apart from the slots: each reads back as written', () => {
    const file = newFile(2);
    const recorder = new FlightRecorder(file.path);
    recorder.started(1, job(5));
    recorder.loop({ phase: 'claiming', since: 1_700_000_000_123, lastClaimAt: null });
    expect(file.readLoop()).toEqual({ phase: 'claiming', since: 1_700_000_000_123, lastClaimAt: null });
    expect(file.read()).toEqual([{ slot: 1, ...job(5) }]);
    recorder.close();
  });

  it('keeps the records of a child that died: they are read after its exit', async () => {
    const file = newFile(2);
    const script = `
      const { FlightRecorder } = await import(${JSON.stringify(new URL('../../dist/src/ipc/flight-record.js', import.meta.url).href)});
      new FlightRecorder(${JSON.stringify(file.path)}).started(1, ${JSON.stringify(job(42, 2))});
      process.kill(process.pid, 'SIGKILL');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
    const signal = await new Promise((resolve) => child.on('exit', (_code, exitSignal) => resolve(exitSignal)));
    expect(signal).toBe('SIGKILL');
    expect(file.read()).toEqual([{ slot: 1, ...job(42, 2) }]);
  });

  it('a record whose two sequence numbers differ (a write in progress) is not read as a job', () => {
    const file = newFile(1);
    const recorder = new FlightRecorder(file.path);
    recorder.started(0, job(5));
    // the first bytes of a newer write landed, the rest not yet
    const fd = openSync(file.path, 'r+');
    writeSync(fd, Buffer.from([0xff, 0xff, 0xff, 0x7f]), 0, 4, 0);
    expect(file.read()).toEqual([]);
    recorder.started(0, job(6));
    expect(file.read()).toEqual([{ slot: 0, ...job(6) }]);
    recorder.close();
  });

  it('removes the files of supervisors that are gone, and only those', async () => {
    const mine = newFile(1);
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => gone.on('exit', resolve));
    const orphan = path.join(path.dirname(mine.path), `${FLIGHT_FILE_PREFIX}${gone.pid}-test_flight.1`);
    writeFileSync(orphan, Buffer.alloc(RECORD_BYTES));
    removeOrphanFlightFiles(isPidAlive);
    expect(existsSync(orphan)).toBe(false);
    expect(existsSync(mine.path)).toBe(true);
  });
});
