import type { Clock } from '../clock.js';
import { InvalidInputError } from '../errors.js';
import { KEY_SCOPES, ON_PARENT_FAILURE, type KeyScope, type NewJob, type OnParentFailure } from '../store/types.js';
import { DEFAULT_MAX_RETRIES, DEFAULT_PAYLOAD_LIMIT_BYTES, DEFAULT_PRIORITY, MAX_PRIORITY } from '../limits.js';

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
  /** Unique per class: enqueueing the same key again returns the existing job (`created: false`). */
  key?: string;
  /** When the key is free again: `row` (default) while this job's row exists, `incomplete` once the job has ended. */
  keyScope?: KeyScope;
  /** The key is also free again this many seconds after the job was created. */
  keyTtlSeconds?: number;
  /**
   * The jobs this one waits for (it is WAITING until every one has ended): ids of jobs that exist, or, in an
   * enqueueMany, the `ref` of an earlier request of the same batch.
   */
  dependsOn?: readonly (number | string)[];
  /** This request's name, for the `dependsOn` of later requests in the same enqueueMany. */
  ref?: string;
  /** When a parent ends FAILED or CANCELLED: `cancel` this job (default, DEPENDENCY:FAILED or :CANCELLED) or `run` it. */
  onParentFailure?: OnParentFailure;
}

/** Parents one job may name: a flow is wide through many jobs, not one job with a huge list. */
export const MAX_PARENTS = 1000;

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
  refs: ReadonlyMap<string, number> = new Map(),
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
  const job: NewJob = {
    class: request.class,
    payload,
    priority,
    runAt: runAtOf(request, clock),
    maxRetries,
    maxRetriesFromClass: ownMaxRetries === undefined,
    idempotencyKey: request.key ?? null,
  };
  return Object.assign(job, keyLifeOf(request, clock), parentsOf(request, refs));
}

/**
 * Requests of one batch checked and made rows; a `ref` names a request for
 * the `dependsOn` of later ones (an earlier one only: a batch cannot build a
 * cycle). The first refused throws InvalidInputError, naming its place:
 * `placeOf(index)` when given (a file's line, say), else `job N` in a batch
 * of several.
 */
export function prepareJobs(
  requests: readonly EnqueueRequest[],
  clock: Clock,
  limits: EnqueueLimits = DEFAULT_ENQUEUE_LIMITS,
  placeOf?: (index: number) => string,
): NewJob[] {
  const refs = new Map<string, number>();
  return requests.map((request, index) => {
    try {
      const job = prepareJob(request, clock, limits, refs);
      if (request.ref !== undefined) {
        if (typeof request.ref !== 'string' || request.ref === '' || refs.has(request.ref))
          throw new InvalidInputError(
            'REF',
            `ref must be a non-empty string unique in the batch, got ${JSON.stringify(request.ref)}`,
          );
        refs.set(request.ref, index);
      }
      return job;
    } catch (error) {
      if (error instanceof InvalidInputError && (placeOf !== undefined || requests.length > 1)) {
        const place = placeOf?.(index) ?? `job ${index + 1}`;
        throw new InvalidInputError(error.code.split(':')[1] ?? 'JOB', `${place}: ${error.message}`);
      }
      throw error;
    }
  });
}

function keyLifeOf(request: EnqueueRequest, clock: Clock): Pick<NewJob, 'keyScope' | 'keyExpiresAt'> {
  const { keyScope, keyTtlSeconds } = request;
  if (keyScope === undefined && keyTtlSeconds === undefined) return {};
  if (request.key === undefined) throw new InvalidInputError('KEY', 'a key scope or lifetime needs a key');
  if (keyScope !== undefined && !KEY_SCOPES.includes(keyScope))
    throw new InvalidInputError(
      'KEY_SCOPE',
      `the key scope must be ${KEY_SCOPES.join(' or ')}, got ${JSON.stringify(keyScope)}`,
    );
  if (
    keyTtlSeconds !== undefined &&
    !(typeof keyTtlSeconds === 'number' && Number.isFinite(keyTtlSeconds) && keyTtlSeconds > 0)
  )
    throw new InvalidInputError(
      'KEY_TTL',
      `the key lifetime must be a number of seconds > 0, got ${String(keyTtlSeconds)}`,
    );
  return {
    keyScope: keyScope ?? 'row',
    keyExpiresAt: keyTtlSeconds === undefined ? null : clock.now() + Math.round(keyTtlSeconds * 1000),
  };
}

function parentsOf(
  request: EnqueueRequest,
  refs: ReadonlyMap<string, number>,
): Pick<NewJob, 'parentIds' | 'parentIndexes' | 'onParentFailure'> {
  const { dependsOn, onParentFailure } = request;
  if (onParentFailure !== undefined && !ON_PARENT_FAILURE.includes(onParentFailure))
    throw new InvalidInputError(
      'ON_PARENT_FAILURE',
      `the parent failure policy must be ${ON_PARENT_FAILURE.join(' or ')}, got ${JSON.stringify(onParentFailure)}`,
    );
  const policy = onParentFailure === undefined ? {} : { onParentFailure };
  if (dependsOn === undefined) return policy;
  if (!Array.isArray(dependsOn) || dependsOn.length > MAX_PARENTS)
    throw new InvalidInputError('DEPENDS_ON', `dependsOn must be an array of at most ${MAX_PARENTS} job ids or refs`);
  const parentIds: number[] = [];
  const parentIndexes: number[] = [];
  for (const parent of dependsOn as unknown[]) {
    if (typeof parent === 'number' && Number.isSafeInteger(parent) && parent > 0) parentIds.push(parent);
    else if (typeof parent === 'string' && refs.has(parent)) parentIndexes.push(refs.get(parent)!);
    else
      throw new InvalidInputError(
        'DEPENDS_ON',
        typeof parent === 'string'
          ? `dependsOn names ref ${JSON.stringify(parent)}, which no earlier job of this batch has`
          : `dependsOn must hold job ids (positive integers) or refs, got ${JSON.stringify(parent)}`,
      );
  }
  return { ...policy, parentIds, parentIndexes };
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
