/** Which statement of a driver answers a jobs list or a FAILED-jobs filter: the choice both drivers make alike. */
import type { BulkBounds, FailedFilter, JobListFilter } from './types.js';

/** The cursor of a first page: below every id. */
export const FIRST_PAGE = Number.MAX_SAFE_INTEGER;

/** The list statements, by the filters given (each driver's JOB_SQL has one of each name). */
export type JobListStatement =
  'listAll' | 'listByStatus' | 'listByClass' | 'listByClassStatus' | 'listFailedByCode' | 'listFailedByClassCode';

/** The statement for a list, or undefined when the filters exclude each other (an error code with a status other than FAILED). */
export function jobListStatement(filter: JobListFilter): JobListStatement | undefined {
  if (filter.errorCode !== undefined) {
    if (filter.status !== undefined && filter.status !== 'FAILED') return undefined;
    return filter.class === undefined ? 'listFailedByCode' : 'listFailedByClassCode';
  }
  if (filter.status !== undefined) return filter.class === undefined ? 'listByStatus' : 'listByClassStatus';
  return filter.class === undefined ? 'listAll' : 'listByClass';
}

/** Jobs a bulk action changes in one transaction: a request never holds the write lock for long. */
export const BULK_BATCH = 500;

/**
 * A bulk action in batches: `batch(through, size)` changes at most `size`
 * matching jobs with ids up to `through` in one transaction and says how many
 * it changed; a changed job matches no more, so the next batch takes others.
 */
export async function inBatches(
  bounds: BulkBounds,
  batch: (throughId: number, size: number) => Promise<number>,
): Promise<number> {
  const throughId = bounds.throughId ?? FIRST_PAGE;
  const limit = bounds.limit ?? Number.POSITIVE_INFINITY;
  let done = 0;
  for (;;) {
    const size = Math.min(BULK_BATCH, limit - done);
    if (size <= 0) return done;
    const changed = await batch(throughId, size);
    done += changed;
    if (changed < size) return done;
  }
}

/** The bulk cancel's statement: every QUEUED job, or a class's. */
export function cancelQueuedStatement(filter: { class?: string }): 'cancelAllQueued' | 'cancelClassQueued' {
  return filter.class === undefined ? 'cancelAllQueued' : 'cancelClassQueued';
}

/** Which FAILED jobs a filter takes: every one, a class's, an error code's, or both given. */
type FailedScope = 'all' | 'class' | 'code' | 'classCode';

function failedScope(filter: FailedFilter): FailedScope {
  if (filter.errorCode === undefined) return filter.class === undefined ? 'all' : 'class';
  return filter.class === undefined ? 'code' : 'classCode';
}

/** The statements over a filter's FAILED jobs, by what they do and the filter's scope (each driver's JOB_SQL has one of each name). */
const FAILED_STATEMENTS = {
  count: {
    all: 'countFailed',
    class: 'countFailedOfClass',
    code: 'countFailedWithCode',
    classCode: 'countFailedOfClassWithCode',
  },
  retry: {
    all: 'retryAllFailed',
    class: 'retryClassFailed',
    code: 'retryCodeFailed',
    classCode: 'retryClassCodeFailed',
  },
} as const;

/** The statement that counts (`count`) or queues again (`retry`) the FAILED jobs of a filter. */
export function failedStatement(
  use: keyof typeof FAILED_STATEMENTS,
  filter: FailedFilter,
): (typeof FAILED_STATEMENTS)[typeof use][FailedScope] {
  return FAILED_STATEMENTS[use][failedScope(filter)];
}

/** The filter's values in the order those statements take them: the class, then the error code (each when given). */
export function failedValues(filter: FailedFilter): string[] {
  return [filter.class, filter.errorCode].filter((value) => value !== undefined);
}
