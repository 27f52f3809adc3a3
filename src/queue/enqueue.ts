import type { Clock } from '../clock.js';
import { InvalidInputError } from '../errors.js';
import type { NewJob } from '../store/types.js';
import { DEFAULT_MAX_RETRIES, DEFAULT_PAYLOAD_LIMIT_BYTES, DEFAULT_PRIORITY, MAX_PRIORITY } from './limits.js';

/** What a producer asks for; everything but the class is optional. */
export interface EnqueueRequest {
  class: string;
  payload?: unknown;
  priority?: number;
  /** Seconds from now before the job may run. */
  delay?: number;
  /** Not before this time (epoch ms or a Date); exclusive with delay. */
  runAt?: number | Date;
  /** None: the class's max_retries, from the config of the child that claims the job (written by each claim). */
  maxRetries?: number;
  /** Unique per class: enqueueing the same key again returns the existing job. */
  key?: string;
}

export interface EnqueueLimits {
  payloadLimitBytes: number;
  /** The max_retries of this producer's jobs that give none; none: their class's. */
  defaultMaxRetries?: number;
}

export const DEFAULT_ENQUEUE_LIMITS: EnqueueLimits = {
  payloadLimitBytes: DEFAULT_PAYLOAD_LIMIT_BYTES,
};

/**
 * Check a producer's request and turn it into a row to insert. Throws
 * InvalidInputError naming the field; nothing is written for a bad request.
 */
export function prepareJob(
  request: EnqueueRequest,
  clock: Clock,
  limits: EnqueueLimits = DEFAULT_ENQUEUE_LIMITS,
): NewJob {
  checkClassName(request.class);
  const payload = serialisePayload(request.payload ?? null, limits.payloadLimitBytes);
  const priority = request.priority ?? DEFAULT_PRIORITY;
  if (!Number.isSafeInteger(priority) || Math.abs(priority) > MAX_PRIORITY) {
    throw new InvalidInputError(
      'PRIORITY',
      `priority must be an integer between -${MAX_PRIORITY} and ${MAX_PRIORITY}, got ${String(priority)}`,
    );
  }
  const ownMaxRetries = request.maxRetries ?? limits.defaultMaxRetries;
  const maxRetries = ownMaxRetries ?? DEFAULT_MAX_RETRIES;
  if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) {
    throw new InvalidInputError('MAX_RETRIES', `max_retries must be a whole number >= 0, got ${String(maxRetries)}`);
  }
  if (
    request.key !== undefined &&
    (typeof request.key !== 'string' || request.key === '' || request.key.length > 255)
  ) {
    throw new InvalidInputError('KEY', 'key must be a string of 1 to 255 characters');
  }
  return {
    class: request.class,
    payload,
    priority,
    runAt: runAtOf(request, clock),
    maxRetries,
    maxRetriesFromClass: ownMaxRetries === undefined,
    idempotencyKey: request.key ?? null,
  };
}

/** A class name, as enqueue and the class controls take it. */
export function checkClassName(name: string): void {
  if (typeof name !== 'string' || name.trim() === '')
    throw new InvalidInputError('CLASS', 'class must be a non-empty string');
}

function runAtOf(request: EnqueueRequest, clock: Clock): number {
  if (request.delay !== undefined && request.runAt !== undefined) {
    throw new InvalidInputError('SCHEDULE', 'give delay or run_at, not both');
  }
  if (request.delay !== undefined) {
    if (typeof request.delay !== 'number' || !Number.isFinite(request.delay) || request.delay < 0) {
      throw new InvalidInputError('DELAY', `delay must be a number of seconds >= 0, got ${String(request.delay)}`);
    }
    return clock.now() + Math.round(request.delay * 1000);
  }
  if (request.runAt !== undefined) {
    const at = request.runAt instanceof Date ? request.runAt.getTime() : request.runAt;
    if (typeof at !== 'number' || !Number.isFinite(at) || at < 0) {
      throw new InvalidInputError('RUN_AT', `run_at must be a valid time, got ${String(request.runAt)}`);
    }
    return Math.round(at);
  }
  return clock.now();
}

/** JSON text of a payload, or InvalidInputError when it cannot be stored faithfully or is too big. */
export function serialisePayload(payload: unknown, limitBytes: number): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(payload, rejectLossyValues);
  } catch (error) {
    throw new InvalidInputError('PAYLOAD', `payload is not JSON-serialisable: ${(error as Error).message}`);
  }
  if (text === undefined) throw new InvalidInputError('PAYLOAD', 'payload is not JSON-serialisable');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limitBytes) {
    throw new InvalidInputError('PAYLOAD_TOO_LARGE', `payload is ${bytes} bytes, over the ${limitBytes}-byte limit`);
  }
  return text;
}

/** JSON.stringify silently drops or mangles these; a job queue must not. */
function rejectLossyValues(key: string, value: unknown): unknown {
  const where = key === '' ? 'payload' : `payload field "${key}"`;
  if (typeof value === 'function' || typeof value === 'symbol') throw new TypeError(`${where} is a ${typeof value}`);
  if (typeof value === 'bigint') throw new TypeError(`${where} is a bigint`);
  if (typeof value === 'undefined' && key === '') throw new TypeError(`${where} is undefined`);
  if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`${where} is ${value}`);
  return value;
}
