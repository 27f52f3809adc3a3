/**
 * Logging setup: JSON lines to a size-rotated file, a readable line on stdout.
 * Labels (class, pid, job_id, attempt, event) go on with `logger.child({...})`;
 * errors go under `err`: `logger.warn('handler failed', { err })`.
 */
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import winston from 'winston';
import type { LogLevel } from './limits.js';
import { LeaseholdError } from './errors.js';

export type Logger = winston.Logger;

export interface LoggerOptions {
  level: LogLevel;
  /** Absolute path of the JSON log file; null for stdout only. */
  file: string | null;
  maxSizeMb: number;
  maxFiles: number;
  supervisorId: string;
  /** Also print a readable line per entry on stdout. */
  console: boolean;
}

/** The fields every line may carry, in the order they are written. */
const LABELS = ['supervisor_id', 'class', 'pid', 'job_id', 'attempt', 'event'] as const;
/** Keys that are not printed as extra `key=value` fields. */
const RESERVED = new Set(['level', 'message', 'msg', 'ts', 'err', ...LABELS]);
// triple-beam's symbols, named through the global registry rather than an undeclared dependency.
const MESSAGE = Symbol.for('message');
const LEVEL = Symbol.for('level');

type Info = winston.Logform.TransformableInfo & Record<string | symbol, unknown>;
export type LogRecord = Record<string, unknown> & { ts: string; level: string; msg: string };

export function createLogger(options: LoggerOptions): Logger {
  const transports: winston.transport[] = [];
  let file: RotatingFile | undefined;
  if (options.file !== null) {
    file = openLogFile(options.file, Math.max(1, Math.round(options.maxSizeMb * 1024 * 1024)), options.maxFiles);
    transports.push(
      new winston.transports.Stream({
        stream: file,
        eol: '\n',
        format: winston.format((info) => withMessage(info, safeJson(toRecord(info as Info))))(),
      }),
    );
  }
  if (options.console) {
    transports.push(
      new winston.transports.Console({
        format: winston.format((info) => withMessage(info, formatConsoleLine(toRecord(info as Info))))(),
      }),
    );
  }
  const logger = winston.createLogger({
    level: options.level,
    defaultMeta: { supervisor_id: options.supervisorId },
    format: winston.format((info) => stamp(info as Info))(),
    transports,
    // Without a transport winston warns on every write.
    silent: transports.length === 0,
    exitOnError: false,
  });
  if (file !== undefined) logFiles.set(logger, file);
  // A failing transport, or a write after close, must neither crash the supervisor nor go unseen.
  logger.on('error', (error: unknown) => {
    process.stderr.write(`leasehold: log error: ${describeError(error)}\n`);
  });
  return logger;
}

/**
 * Ends the logger and waits until every line is in the log file and the file
 * is closed. Call it on the root logger (not a child) before the process
 * exits; safe twice.
 */
export async function closeLogger(logger: Logger): Promise<void> {
  const drained = logger.transports.map(
    (transport) =>
      new Promise<void>((resolve) => {
        if (transport.writableFinished) return resolve();
        transport.once('finish', () => resolve());
        transport.once('error', () => resolve());
      }),
  );
  if (!logger.writableEnded) logger.end();
  await Promise.all(drained);
  const file = logFiles.get(logger);
  if (file !== undefined && !file.writableFinished) await new Promise<void>((resolve) => file.end(() => resolve()));
}

const logFiles = new WeakMap<Logger, RotatingFile>();

/**
 * Runs before the transports: one timestamp per entry, and an Error logged on
 * its own (`logger.error(err)`) or merged in by winston becomes `err`.
 */
function stamp(info: Info): Info {
  let entry = info;
  if (info instanceof Error) {
    entry = { level: info.level, [LEVEL]: info[LEVEL], message: info.message, err: info } as Info;
    for (const label of LABELS) if (info[label] !== undefined) entry[label] = info[label];
  } else if (typeof info.stack === 'string' && info.err === undefined) {
    const err: SerializedError = { message: String(info.message ?? '') };
    if (info.code !== undefined) err.code = info.code;
    err.stack = info.stack;
    entry.err = err;
    delete entry.stack;
    delete entry.code;
    delete entry.cause;
  }
  entry.ts = new Date().toISOString();
  return entry;
}

/** The entry as written to the file: labels first, then the call's own fields. */
export function toRecord(info: Info): LogRecord {
  const record: LogRecord = {
    ts: typeof info.ts === 'string' ? info.ts : new Date().toISOString(),
    level: info.level,
    msg: String(info.message ?? ''),
  };
  for (const label of LABELS) if (info[label] !== undefined) record[label] = info[label];
  if (info.err !== undefined) record.err = serializeError(info.err);
  for (const key of Object.keys(info)) {
    if (RESERVED.has(key) || info[key] === undefined) continue;
    record[key] = info[key] instanceof Error ? serializeError(info[key]) : info[key];
  }
  return record;
}

/**
 * `2026-11-21T06:12:52.123Z info  [sup=s1 email pid=123 job=45 attempt=2 event=KILLED] child killed exit_signal=SIGKILL err=TIMEOUT:MAX_RUNTIME "ran past 300s"`
 */
export function formatConsoleLine(record: LogRecord): string {
  const labels: string[] = [];
  if (record.supervisor_id !== undefined) labels.push(`sup=${String(record.supervisor_id)}`);
  if (record.class !== undefined) labels.push(String(record.class));
  if (record.pid !== undefined) labels.push(`pid=${String(record.pid)}`);
  if (record.job_id !== undefined) labels.push(`job=${String(record.job_id)}`);
  if (record.attempt !== undefined) labels.push(`attempt=${String(record.attempt)}`);
  if (record.event !== undefined) labels.push(`event=${String(record.event)}`);

  let line = `${record.ts} ${record.level.padEnd(5)} `;
  if (labels.length > 0) line += `[${labels.join(' ')}] `;
  line += oneLine(record.msg);
  for (const [key, value] of Object.entries(record)) {
    if (RESERVED.has(key)) continue;
    line += ` ${key}=${formatValue(value)}`;
  }
  if (record.err !== undefined) line += ` err=${formatErrorShort(record.err)}`;
  return line;
}

export interface SerializedError {
  name?: string;
  code?: unknown;
  message: string;
  retryable?: boolean;
  stack?: string;
  cause?: SerializedError | string;
}

/** Errors' fields are not enumerable: JSON.stringify would write `{}`. */
export function serializeError(error: unknown, depth = 0): SerializedError | string {
  if (error instanceof Error) {
    const out: SerializedError = { name: error.name, message: error.message };
    const { code, retryable } = error as { code?: unknown; retryable?: unknown };
    if (code !== undefined) out.code = code;
    if (typeof retryable === 'boolean') out.retryable = retryable;
    if (error.stack !== undefined) out.stack = error.stack;
    if (error.cause !== undefined && depth < 3) out.cause = serializeError(error.cause, depth + 1);
    return out;
  }
  // An error summary that crossed IPC ({name, code, message}) is already plain data.
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
    return { ...(error as SerializedError) };
  }
  return typeof error === 'string' ? error : safeJson(error);
}

function formatErrorShort(err: unknown): string {
  // JSON.stringify keeps the line single: it escapes newlines.
  if (typeof err === 'string') return JSON.stringify(err);
  const { code, name, message } = err as SerializedError;
  const label = typeof code === 'string' ? code : (name ?? 'Error');
  return `${label} ${JSON.stringify(message ?? '')}`;
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'object' && value !== null) return safeJson(value);
  return String(value);
}

function oneLine(text: string): string {
  return text.replace(/\r?\n/g, '\\n');
}

function withMessage(info: winston.Logform.TransformableInfo, text: string): winston.Logform.TransformableInfo {
  (info as Record<symbol, unknown>)[MESSAGE] = text;
  return info;
}

/** A log call must never throw: BigInt becomes a string, a cycle becomes "[Circular]". */
function safeJson(value: unknown): string {
  const seen = new WeakSet<object>();
  try {
    return JSON.stringify(value, (_key, inner: unknown) => {
      if (typeof inner === 'bigint') return inner.toString();
      if (typeof inner === 'object' && inner !== null) {
        if (seen.has(inner)) return '[Circular]';
        seen.add(inner);
      }
      return inner;
    });
  } catch (error) {
    return JSON.stringify(`[unserialisable: ${describeError(error)}]`);
  }
}

function describeError(error: unknown): string {
  return error instanceof Error
    ? `${(error as { code?: unknown }).code ?? error.name}: ${error.message}`
    : String(error);
}

/** Fails at start-up, naming the path, rather than on the first write. */
function openLogFile(file: string, maxBytes: number, maxFiles: number): RotatingFile {
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    return new RotatingFile(file, maxBytes, maxFiles);
  } catch (error) {
    throw new LeaseholdError('CONFIG:INVALID', `log file ${file}: cannot write: ${describeError(error)}`, {
      retryable: false,
      cause: error,
    });
  }
}

/**
 * Kept by hand, not a rotating transport: winston's File transport (3.19)
 * dropped lines and hung on end() when a burst crossed maxsize, and
 * winston-daily-rotate-file and pino-roll write asynchronously, so a killed
 * supervisor would lose its last lines. Here a line is in the file when the
 * log call returns, and rotation cannot race with shutdown. Rotation is
 * tailable, with winston's names: supervisor.log is the newest, then
 * supervisor1.log, supervisor2.log.
 */
class RotatingFile extends Writable {
  /** undefined after a failed reopen: the next line tries again. */
  private fd: number | undefined;
  private size = 0;
  /** Problems already reported: once per outage, not once per line. */
  private readonly reported = new Set<'write' | 'rotate'>();

  constructor(
    private readonly file: string,
    private readonly maxBytes: number,
    private readonly maxFiles: number,
  ) {
    super();
    this.fd = this.open();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    try {
      if (this.size > 0 && this.size + chunk.length > this.maxBytes) this.rotate();
      this.fd ??= this.open();
      for (let offset = 0; offset < chunk.length;) offset += writeSync(this.fd, chunk, offset);
      this.size += chunk.length;
      this.reported.delete('write');
    } catch (error) {
      // A full disk must not take the supervisor down: drop the line, say so.
      this.report('write', error);
    }
    done();
  }

  override _final(done: (error?: Error | null) => void): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    done();
  }

  private open(): number {
    const fd = openSync(this.file, 'a');
    this.size = fstatSync(fd).size;
    return fd;
  }

  private rotate(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    try {
      if (this.maxFiles === 1) rmSync(this.file, { force: true });
      // rename replaces its target, so the oldest file drops off the end.
      for (let index = this.maxFiles - 1; index >= 1; index--) {
        const from = this.numbered(index - 1);
        if (existsSync(from)) renameSync(from, this.numbered(index));
      }
      this.reported.delete('rotate');
    } catch (error) {
      // Keep appending to the current file rather than lose lines.
      this.report('rotate', error);
    }
  }

  /** 0 → supervisor.log, 2 → supervisor2.log. */
  private numbered(index: number): string {
    if (index === 0) return this.file;
    const ext = path.extname(this.file);
    return `${this.file.slice(0, this.file.length - ext.length)}${index}${ext}`;
  }

  private report(what: 'write' | 'rotate', error: unknown): void {
    if (!this.reported.has(what))
      process.stderr.write(`leasehold: cannot ${what} log file ${this.file}: ${describeError(error)}\n`);
    this.reported.add(what);
  }
}
