/**
 * The operator's controls, one rule each: what a store's outcome means, and
 * which error a refusal is. `leasehold cancel/retry/pause/resume`, the
 * dashboard's actions and the library's Queue all call these, each with its
 * own actor, and add only their own words (a line, a page, a return value).
 */
import { InvalidInputError, JobStateError, NotFoundError } from '../errors.js';
import { closest } from '../closest.js';
import type { BulkBounds, FailedFilter, JobStatus, OperatorStore, ProducerStore } from '../store/types.js';
import { pausedClasses } from './class-controls.js';
import { checkClassName } from './enqueue.js';

/** What a cancel did: `already_cancelled` and `already_requested` wrote nothing. */
export interface CancelResult {
  id: number;
  outcome: 'cancelled' | 'cancel_requested' | 'already_requested' | 'already_cancelled';
  /** The job's status after the cancel (a held job stays CLAIMED or RUNNING until its worker aborts it). */
  status: JobStatus | null;
}

export interface RetryResult {
  id: number;
  outcome: 'queued';
}

/** Which FAILED jobs a bulk retry queues: all, or those of a class, of an error code, or both, within the bounds. */
export interface RetryFailedFilter extends FailedFilter, BulkBounds {
  status: 'FAILED';
}

export interface PauseResult {
  class: string;
  outcome: 'paused' | 'already_paused';
  paused_at: number | null;
  paused_by: string | null;
}

export interface ResumeResult {
  class: string;
  outcome: 'resumed' | 'not_paused';
}

/** How the caller spells a bulk retry's fields, for its error messages (the CLI's are its flags). */
export interface FilterNames {
  status: string;
  class: string;
  errorCode: string;
}

const FIELD_NAMES: FilterNames = { status: 'status', class: 'class', errorCode: 'errorCode' };

/** A job id: a positive safe integer. */
export function checkJobId(id: number): void {
  if (!Number.isSafeInteger(id) || id < 1)
    throw new InvalidInputError('ID', `job id must be a positive integer, got ${JSON.stringify(String(id))}`);
}

/**
 * A queued job is cancelled at once; a held one is marked, and its worker
 * aborts it at the next heartbeat. A job already cancelled is no error; one
 * that ended otherwise is a JobStateError (NOT_CANCELLABLE).
 */
export async function cancelJob(
  store: Pick<OperatorStore, 'jobCancel' | 'jobGet'>,
  id: number,
  actor: string,
): Promise<CancelResult> {
  checkJobId(id);
  const outcome = await store.jobCancel({ id, actor });
  if (outcome === 'not_found') throw new NotFoundError(`job ${id}`);
  const status = (await store.jobGet({ id }))?.status ?? null;
  if (outcome !== 'terminal') return { id, outcome, status };
  if (status !== 'CANCELLED')
    throw new JobStateError(
      'NOT_CANCELLABLE',
      `job ${id} already ended ${status}: there is nothing to cancel`,
      id,
      String(status),
    );
  return { id, outcome: 'already_cancelled', status };
}

/** A FAILED job is queued to run once more, now; any other status is a JobStateError (NOT_FAILED). */
export async function retryJob(
  store: Pick<OperatorStore, 'jobRetry' | 'jobGet'>,
  id: number,
  actor: string,
): Promise<RetryResult> {
  checkJobId(id);
  const outcome = await store.jobRetry({ id, actor });
  if (outcome === 'not_found') throw new NotFoundError(`job ${id}`);
  if (outcome === 'not_failed') {
    const status = String((await store.jobGet({ id }))?.status);
    throw new JobStateError(
      'NOT_FAILED',
      `job ${id} is ${status}, not FAILED: only FAILED jobs can be retried`,
      id,
      status,
    );
  }
  return { id, outcome };
}

/** A bulk retry's filter, checked before anything is read or written; its status in any case. */
export function checkRetryFilter(
  filter: FailedFilter & BulkBounds & { status: string },
  names: FilterNames = FIELD_NAMES,
): asserts filter is RetryFailedFilter {
  if (String(filter.status).toUpperCase() !== 'FAILED')
    throw new InvalidInputError(
      'STATUS',
      `only FAILED jobs can be retried: ${names.status} must be FAILED, got ${JSON.stringify(filter.status)}`,
    );
  if (filter.class !== undefined && (typeof filter.class !== 'string' || filter.class.trim() === ''))
    throw new InvalidInputError('CLASS', `${names.class} must not be empty`);
  if (filter.errorCode !== undefined && (typeof filter.errorCode !== 'string' || filter.errorCode.trim() === ''))
    throw new InvalidInputError('ERROR_CODE', `${names.errorCode} must not be empty`);
  for (const bound of ['throughId', 'limit'] as const) {
    const value = filter[bound];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1))
      throw new InvalidInputError('BOUNDS', `${bound} must be a positive integer, got ${String(value)}`);
  }
}

/** The FAILED jobs of the filter run once more, now; returns how many were queued (none match: 0). */
export async function retryFailed(
  store: Pick<OperatorStore, 'jobRetryFailed'>,
  filter: RetryFailedFilter,
  actor: string,
): Promise<{ count: number }> {
  checkRetryFilter(filter);
  const { class: jobClass, errorCode, throughId, limit } = filter;
  return { count: await store.jobRetryFailed({ class: jobClass, errorCode, throughId, limit, actor }) };
}

type ControlStore = Pick<OperatorStore, 'classPause' | 'classResume' | 'classControlList'> &
  Pick<ProducerStore, 'workerClassServed' | 'workerServedClasses'>;

/** How many served classes a refusal looks through for the closest name. */
const SERVED_LOOKED_AT = 1_000;

/**
 * A pause or resume names a class some config or supervisor has named: one
 * in `known` (the caller's config), one a supervisor has served, or one with
 * a control row already (so a pause can always be undone). Anything else is
 * a typo that would write a row no worker ever reads: refused, with the
 * closest known name.
 */
async function checkClassNamed(store: ControlStore, jobClass: string, known: Iterable<string>): Promise<void> {
  checkClassName(jobClass);
  const configured = new Set(known);
  if (configured.has(jobClass) || (await store.workerClassServed({ class: jobClass }))) return;
  const controlled = (await store.classControlList()).map((row) => row.class);
  if (controlled.includes(jobClass)) return;
  const served = await store.workerServedClasses({ limit: SERVED_LOOKED_AT });
  const meant = closest(jobClass, [...configured, ...served, ...controlled]);
  throw new InvalidInputError(
    'CLASS',
    `unknown class ${JSON.stringify(jobClass)}: no config or supervisor has named it${meant === undefined ? '' : ` (did you mean "${meant}"?)`}`,
  );
}

/**
 * A paused class claims nothing, on every host, until it is resumed; jobs
 * running go on. Pausing twice is no error. `known`: the classes of the
 * caller's config.
 */
export async function pauseClass(
  store: ControlStore,
  jobClass: string,
  actor: string,
  known: Iterable<string> = [],
): Promise<PauseResult> {
  await checkClassNamed(store, jobClass, known);
  const outcome = await store.classPause({ class: jobClass, actor });
  const pause = (await pausedClasses(store)).find((row) => row.class === jobClass);
  return { class: jobClass, outcome, paused_at: pause?.paused_at ?? null, paused_by: pause?.paused_by ?? null };
}

/** Resuming a class that is not paused is no error. */
export async function resumeClass(
  store: ControlStore,
  jobClass: string,
  actor: string,
  known: Iterable<string> = [],
): Promise<ResumeResult> {
  await checkClassNamed(store, jobClass, known);
  return { class: jobClass, outcome: await store.classResume({ class: jobClass, actor }) };
}
