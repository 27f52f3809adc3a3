/**
 * The supervisor's structured log read back, as `leasehold logs` shows it:
 * its JSON lines filtered by class, job and level, the last ones of the
 * file, then (following) each new line as it is written, across the log's
 * rotation (supervisor.log is renamed supervisor1.log and a new one begun).
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { LogRecord } from '../log.js';

/** winston's npm levels, most severe first: `--level warn` keeps error and warn. */
const LEVELS = ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'];

export interface LogFilter {
  class?: string;
  jobId?: number;
  /** The least severe level kept. */
  level?: string;
}

export function isLevel(name: string): boolean {
  return LEVELS.includes(name);
}

/** One line of the file as a record, or undefined for a line that is not one (a torn write, a stray print). */
export function parseRecord(line: string): LogRecord | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    if (typeof value !== 'object' || value === null) return undefined;
    const record = value as LogRecord;
    return typeof record.ts === 'string' && typeof record.level === 'string' && typeof record.msg === 'string'
      ? record
      : undefined;
  } catch {
    return undefined;
  }
}

export function matches(record: LogRecord, filter: LogFilter): boolean {
  if (filter.class !== undefined && record.class !== filter.class) return false;
  if (filter.jobId !== undefined && record.job_id !== filter.jobId) return false;
  if (filter.level !== undefined && LEVELS.indexOf(record.level) > LEVELS.indexOf(filter.level)) return false;
  return true;
}

const CHUNK = 64 * 1024;

/**
 * A log file read from an offset, line by line. The open descriptor follows
 * the file when rotation renames it, so the lines written before the rename
 * are read to its end; then the new file at the path is opened from its start.
 */
export class LogFollower {
  private fd: number;
  private inode: number;
  private offset = 0;
  private partial = '';
  /** A character split between two reads is decoded whole. */
  private decoder = new StringDecoder('utf8');

  constructor(private readonly file: string) {
    this.fd = openSync(file, 'r');
    this.inode = fstatSync(this.fd).ino;
  }

  /** The complete lines written since the last read. */
  read(): string[] {
    const lines = this.drain();
    const now = pathInode(this.file);
    if (now !== undefined && now !== this.inode) {
      closeSync(this.fd);
      this.fd = openSync(this.file, 'r');
      this.inode = fstatSync(this.fd).ino;
      this.offset = 0;
      this.partial = '';
      this.decoder = new StringDecoder('utf8');
      lines.push(...this.drain());
    }
    return lines;
  }

  close(): void {
    closeSync(this.fd);
  }

  private drain(): string[] {
    const buffer = Buffer.alloc(CHUNK);
    let text = this.partial;
    for (;;) {
      const read = readSync(this.fd, buffer, 0, CHUNK, this.offset);
      if (read === 0) break;
      this.offset += read;
      text += this.decoder.write(buffer.subarray(0, read));
    }
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    return lines.filter((line) => line.length > 0);
  }
}

function pathInode(file: string): number | undefined {
  try {
    return statSync(file).ino;
  } catch {
    return undefined; // between the rename and the new file's first line
  }
}
