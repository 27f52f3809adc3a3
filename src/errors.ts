/**
 * Typed errors with stable codes. Code is `CATEGORY:SUBCATEGORY`; callers
 * branch on `code` or on the class, never on message text.
 */

import { withoutOwnFrames } from './stack-frames.js';

export const ERROR_DETAIL_MAX = 500;
/** Problems of a config beyond this many are summarised, so one broken file does not flood the terminal. */
const MAX_CONFIG_PROBLEMS_SHOWN = 20;

const CODE_SHAPE = /^[A-Z][A-Z0-9_]*:[A-Z0-9_]+$/;

export class LeaseholdError extends Error {
  readonly code: string;
  readonly retryable: boolean;

  constructor(code: string, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? true;
  }
}

/** Bad input from a producer or operator: nothing was written. */
export class InvalidInputError extends LeaseholdError {
  constructor(subcode: string, message: string) {
    super(`INVALID_INPUT:${subcode}`, message, { retryable: false });
  }
}

/** A config that cannot be used (a bad queue.yaml, a bad LEASEHOLD_HOST): one line per problem. */
export class ConfigError extends LeaseholdError {
  /** One entry per problem, each already prefixed with the file. */
  readonly problems: readonly string[];

  constructor(problems: readonly string[], options: { cause?: unknown } = {}) {
    const shown = problems.slice(0, MAX_CONFIG_PROBLEMS_SHOWN);
    if (problems.length > shown.length) shown.push(`... and ${problems.length - shown.length} more problems`);
    super('CONFIG:INVALID', shown.join('\n'), { retryable: false, cause: options.cause });
    this.problems = problems;
  }
}

/** A fenced write found the lease gone: the job now belongs to someone else (or to nobody). */
export class LeaseLostError extends LeaseholdError {
  readonly jobId: number;
  readonly leaseToken: string;

  constructor(jobId: number, leaseToken: string, operation: string) {
    super(
      'LEASE:LOST',
      `job ${jobId}: ${operation} rejected, lease token ${leaseToken.slice(0, 8)}… no longer holds the job`,
      {
        retryable: false,
      },
    );
    this.jobId = jobId;
    this.leaseToken = leaseToken;
  }
}

/**
 * A control the job's status does not allow: a cancel of a job that already
 * ended otherwise (`INVALID_INPUT:NOT_CANCELLABLE`), a retry of a job that
 * is not FAILED (`INVALID_INPUT:NOT_FAILED`). Nothing was written.
 */
export class JobStateError extends InvalidInputError {
  readonly jobId: number;
  /** The job's status when it was refused. */
  readonly status: string;

  constructor(subcode: string, message: string, jobId: number, status: string) {
    super(subcode, message);
    this.jobId = jobId;
    this.status = status;
  }
}

export class NotFoundError extends LeaseholdError {
  constructor(what: string) {
    super('NOT_FOUND:JOB', `${what} not found`, { retryable: false });
  }
}

/** A database or schema without leasehold's tables, opened by something that must not create them. */
export class SchemaMissingError extends LeaseholdError {
  constructor(message: string) {
    super('SCHEMA:MISSING', message, { retryable: false });
  }
}

/** `Queue.waitFor` gave up: the job had not ended within `timeoutMs` (it may still end later). */
export class WaitTimeoutError extends LeaseholdError {
  readonly jobId: number;
  readonly timeoutMs: number;

  constructor(jobId: number, timeoutMs: number) {
    super('TIMEOUT:WAIT', `job ${jobId} had not ended after ${timeoutMs} ms`);
    this.jobId = jobId;
    this.timeoutMs = timeoutMs;
  }
}

/** The Queue was closed: a `waitFor` still waiting ends with this, and so does any call after `close()`. */
export class QueueClosedError extends LeaseholdError {
  constructor() {
    super('QUEUE:CLOSED', 'the queue was closed', { retryable: false });
  }
}

/** A handler can throw this (or any error with `retryable: false`) to skip the remaining retries. */
export class NonRetryableError extends LeaseholdError {
  constructor(message: string, code = 'HANDLER:NON_RETRYABLE') {
    super(code, message, { retryable: false });
  }
}

export interface ErrorSummary {
  name: string;
  code: string;
  message: string;
  retryable: boolean;
}

export function truncate(text: string, max = ERROR_DETAIL_MAX): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Whatever a handler threw, as a summary that survives IPC and fits in
 * error_detail: the handler's own `code` is kept when it has the
 * `CATEGORY:SUBCATEGORY` shape, anything else is INTERNAL:UNHANDLED.
 */
export function coerceError(thrown: unknown): ErrorSummary {
  if (thrown instanceof Error) {
    const candidate = (thrown as { code?: unknown }).code;
    const code = typeof candidate === 'string' && CODE_SHAPE.test(candidate) ? candidate : 'INTERNAL:UNHANDLED';
    const retryable = (thrown as { retryable?: unknown }).retryable !== false;
    // leasehold's own wording is kept whole (a refused payload names each field on a line); anyone else's first
    // line only: the rest of a thrown message is a dump or a stack
    const text = thrown.message || thrown.name;
    const message = thrown instanceof LeaseholdError ? text : (text.split('\n')[0] ?? '');
    return { name: thrown.name, code, message: truncate(message), retryable };
  }
  const text = typeof thrown === 'string' ? thrown : safeStringify(thrown);
  return {
    name: 'NonError',
    code: 'INTERNAL:UNHANDLED',
    message: truncate(`non-error thrown: ${text}`),
    retryable: true,
  };
}

/** A stored stack is cut to this many bytes (the spec's cap on job_attempts.error_stack). */
export const STACK_MAX_BYTES = 8 * 1024;
/** How deep a `cause` chain is followed (a chain may loop). */
const CAUSE_DEPTH = 5;

/** `text` within `maxBytes` of UTF-8, cut at a character boundary, with a mark where it was cut. */
export function capBytes(text: string, maxBytes = STACK_MAX_BYTES): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const mark = '\n… (cut)';
  const cut = Buffer.from(text)
    .subarray(0, maxBytes - Buffer.byteLength(mark))
    .toString();
  // A character split by the cut decodes as U+FFFD: drop it.
  return cut.replace(/\uFFFD$/, '') + mark;
}

/**
 * Whatever a handler threw, in full: the stack (or the message, when there
 * is none) of the error and of each error in its `cause` chain, capped. A
 * cause leaves out the leasehold frames the first stack already shows.
 * Undefined for a thrown value that is not an Error: its summary says all there is.
 */
export function errorStack(thrown: unknown): string | undefined {
  if (!(thrown instanceof Error)) return undefined;
  const parts: string[] = [];
  let current: unknown = thrown;
  for (let depth = 0; depth <= CAUSE_DEPTH && current !== undefined; depth++) {
    const text =
      current instanceof Error ? (current.stack ?? `${current.name}: ${current.message}`) : `${safeStringify(current)}`;
    parts.push(depth === 0 ? text : `Caused by: ${withoutOwnFrames(text)}`);
    current = current instanceof Error ? current.cause : undefined;
  }
  return capBytes(parts.join('\n'));
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Rebuild an error that crossed IPC into the same class, so `retryable` survives the trip. */
export function reviveError(summary: ErrorSummary): LeaseholdError {
  const error = new LeaseholdError(summary.code, summary.message, { retryable: summary.retryable });
  error.name = summary.name;
  return error;
}
