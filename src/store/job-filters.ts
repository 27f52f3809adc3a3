/** Which statement of a driver answers a jobs list or a FAILED-jobs filter: the choice both drivers make alike. */
import type { FailedFilter, JobListFilter } from './types.js';

/** The cursor of a first page: below every id. */
export const FIRST_PAGE = Number.MAX_SAFE_INTEGER;

/** The list statements, by the filters given (each driver's JOB_SQL has one of each name). */
export type JobListStatement = 'listAll' | 'listByStatus' | 'listByClass' | 'listByClassStatus' | 'listFailedByCode' | 'listFailedByClassCode';

/** The statement for a list, or undefined when the filters exclude each other (an error code with a status other than FAILED). */
export function jobListStatement(filter: JobListFilter): JobListStatement | undefined {
  if (filter.errorCode !== undefined) {
    if (filter.status !== undefined && filter.status !== 'FAILED') return undefined;
    return filter.class === undefined ? 'listFailedByCode' : 'listFailedByClassCode';
  }
  if (filter.status !== undefined) return filter.class === undefined ? 'listByStatus' : 'listByClassStatus';
  return filter.class === undefined ? 'listAll' : 'listByClass';
}

/** Which FAILED jobs a filter takes: every one, a class's, an error code's, or both given. */
export type FailedScope = 'all' | 'class' | 'code' | 'classCode';

export function failedScope(filter: FailedFilter): FailedScope {
  if (filter.errorCode === undefined) return filter.class === undefined ? 'all' : 'class';
  return filter.class === undefined ? 'code' : 'classCode';
}
