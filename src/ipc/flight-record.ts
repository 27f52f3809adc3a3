/**
 * The flight recorder: which jobs a child's handlers run, in a small file
 * the supervisor reads (at each health tick, and once when the child has
 * exited) instead of a message per start. One fixed-size record per slot:
 * job id, attempt, lease token, start time, and a sequence number at both
 * ends, so that a read torn by a write in progress is told and read again.
 * The child writes a slot's record with one synchronous positional write
 * before it calls the handler: the kernel keeps the page when the child
 * dies, so no start is hidden by a handler that blocks or kills its child at
 * once. After the slots, one more record says where the child's run loop
 * is (LoopRecord): how the supervisor tells a stalled loop. The file lives
 * where a reboot clears it (/dev/shm, or the system's temp), named after its
 * supervisor's pid so that a supervisor can remove what a dead one left.
 */
import { closeSync, existsSync, fstatSync, openSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { removeNamedAfterDeadPids } from '../pids.js';

export const RECORD_BYTES = 64;
const SEQ_START = 0;
const ATTEMPT = 4;
const JOB_ID = 8;
const STARTED_AT = 16;
const TOKEN_LENGTH = 24;
const TOKEN = 25;
const TOKEN_MAX = 35;
const SEQ_END = 60;
/** The loop record's fields. */
const PHASE = 4;
const PHASE_SINCE = 8;
const LAST_CLAIM_AT = 16;
/** Records after the slots: the loop's. */
const TRAILING_RECORDS = 1;
/** Reads of one slot before a write in progress is taken to have stopped (the writer died mid-write): the slot counts as empty. */
const TORN_READS = 3;
export const FLIGHT_FILE_PREFIX = 'leasehold-flight-';

/** A job whose handler a child runs, as its slot's record says. */
export interface FlightRecord {
  slot: number;
  jobId: number;
  attempt: number;
  leaseToken: string;
  startedAt: number;
}

/**
 * Where a child's run loop is: `busy` (every slot taken: no claim is due),
 * `claim-queued` (a claim waits for the write ahead of it, an outcome or a
 * heartbeat), `claiming` (its claim is in the database), `idle` (waiting
 * out a poll interval), `stopping`.
 */
export const LOOP_PHASES = ['busy', 'claim-queued', 'claiming', 'idle', 'stopping'] as const;
export type LoopPhase = (typeof LOOP_PHASES)[number];

export interface LoopRecord {
  phase: LoopPhase;
  /** When it entered the phase (epoch ms). */
  since: number;
  /** When the database last answered one of its claims, jobs or none (epoch ms); null: never yet. */
  lastClaimAt: number | null;
}

/** Where the files go, first choice first: memory that a reboot clears, else the system's temp (where a container has no writable /dev/shm). */
const flightRecordDirs = (): string[] => [...(existsSync('/dev/shm') ? ['/dev/shm'] : []), tmpdir()];

/** Remove the recorder files of supervisors that are gone (`alive` says whether a pid runs). */
export function removeOrphanFlightFiles(alive: (pid: number) => boolean): void {
  for (const dir of flightRecordDirs()) removeNamedAfterDeadPids(dir, FLIGHT_FILE_PREFIX, alive);
}

/** Write `bytes` of zeros as `name` in the first of the directories that takes it; its path. */
function createEmpty(name: string, bytes: number): string {
  const dirs = flightRecordDirs();
  for (const [i, dir] of dirs.entries()) {
    try {
      writeFileSync(path.join(dir, name), Buffer.alloc(bytes));
      return path.join(dir, name);
    } catch (error) {
      if (i === dirs.length - 1) throw error;
    }
  }
  throw new Error('no directory for the flight recorder');
}

/** The supervisor's side: makes one child's file, reads which jobs it runs, and removes the file once the child is gone. */
export class FlightRecordFile {
  readonly path: string;
  private readonly buffer = Buffer.alloc(RECORD_BYTES);
  private fd: number | undefined;

  constructor(
    workerId: string,
    private readonly slots: number,
  ) {
    this.path = createEmpty(
      `${FLIGHT_FILE_PREFIX}${process.pid}-${workerId.replace(/[^A-Za-z0-9_.-]/g, '_')}`,
      (slots + TRAILING_RECORDS) * RECORD_BYTES,
    );
    this.fd = openSync(this.path, 'r');
  }

  /** Where the child's run loop is, as it last wrote; undefined before it first did, or when removed. */
  readLoop(): LoopRecord | undefined {
    const { fd, buffer } = this;
    if (fd === undefined) return undefined;
    for (let read = 0; read < TORN_READS; read++) {
      if (readSync(fd, buffer, 0, RECORD_BYTES, this.slots * RECORD_BYTES) < RECORD_BYTES) return undefined;
      if (buffer.readUInt32LE(SEQ_START) !== buffer.readUInt32LE(SEQ_END)) continue;
      const phase = LOOP_PHASES[buffer.readUInt32LE(PHASE) - 1];
      if (phase === undefined) return undefined;
      const lastClaimAt = buffer.readDoubleLE(LAST_CLAIM_AT);
      return { phase, since: buffer.readDoubleLE(PHASE_SINCE), lastClaimAt: lastClaimAt > 0 ? lastClaimAt : null };
    }
    return undefined;
  }

  /** The jobs the records say run now, by slot; none once removed. */
  read(): FlightRecord[] {
    const { fd, buffer } = this;
    if (fd === undefined) return [];
    const records: FlightRecord[] = [];
    for (let slot = 0; slot < this.slots; slot++) {
      for (let read = 0; read < TORN_READS; read++) {
        if (readSync(fd, buffer, 0, RECORD_BYTES, slot * RECORD_BYTES) < RECORD_BYTES) break;
        if (buffer.readUInt32LE(SEQ_START) !== buffer.readUInt32LE(SEQ_END)) continue;
        const jobId = buffer.readDoubleLE(JOB_ID);
        if (jobId > 0) {
          const leaseToken = buffer.toString('latin1', TOKEN, TOKEN + buffer[TOKEN_LENGTH]!);
          records.push({
            slot,
            jobId,
            attempt: buffer.readUInt32LE(ATTEMPT),
            leaseToken,
            startedAt: buffer.readDoubleLE(STARTED_AT),
          });
        }
        break;
      }
    }
    return records;
  }

  remove(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    rmSync(this.path, { force: true });
  }
}

/** The child's side: writes a slot's record before its handler begins, and empties slots that went idle. */
export class FlightRecorder {
  private readonly record = Buffer.alloc(RECORD_BYTES);
  private readonly fd: number;
  /** The loop record's place, after the slots. */
  private readonly loopAt: number;
  private seq = 0;

  constructor(file: string) {
    this.fd = openSync(file, 'r+');
    this.loopAt = fstatSync(this.fd).size - RECORD_BYTES;
  }

  /** Where the run loop is now (LoopRecord). */
  loop(state: LoopRecord): void {
    this.write(this.loopAt, (record) => {
      record.writeUInt32LE(LOOP_PHASES.indexOf(state.phase) + 1, PHASE);
      record.writeDoubleLE(state.since, PHASE_SINCE);
      record.writeDoubleLE(state.lastClaimAt ?? 0, LAST_CLAIM_AT);
    });
  }

  started(slot: number, job: Omit<FlightRecord, 'slot'>): void {
    this.write(slot * RECORD_BYTES, (record) => {
      record.writeUInt32LE(job.attempt, ATTEMPT);
      record.writeDoubleLE(job.jobId, JOB_ID);
      record.writeDoubleLE(job.startedAt, STARTED_AT);
      record[TOKEN_LENGTH] = record.write(job.leaseToken, TOKEN, TOKEN_MAX, 'latin1');
    });
  }

  /** The slot runs nothing now. */
  idle(slot: number): void {
    this.write(slot * RECORD_BYTES, () => undefined);
  }

  /** One record at `offset`, `fields` filled in between the sequence numbers, in one positional write. */
  private write(offset: number, fields: (record: Buffer) => void): void {
    this.seq = (this.seq + 1) >>> 0;
    const record = this.record;
    record.fill(0);
    record.writeUInt32LE(this.seq, SEQ_START);
    fields(record);
    record.writeUInt32LE(this.seq, SEQ_END);
    writeSync(this.fd, record, 0, RECORD_BYTES, offset);
  }

  close(): void {
    closeSync(this.fd);
  }
}
