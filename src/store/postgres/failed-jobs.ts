/** The statements that take the FAILED jobs of a filter (FailedFilter), by its scope, each with its filter values in order. */
import { failedScope } from '../job-filters.js';
import type { FailedFilter } from '../types.js';
import type { Statement } from './connection.js';
import { JOB_SQL } from './sql/jobs.js';

interface FilteredStatement {
  statement: Statement;
  /** The filter's values, after any the caller puts first (the retries' `now`). */
  values: unknown[];
}

/** How many FAILED jobs the filter takes. */
export function countFailed(filter: FailedFilter): FilteredStatement {
  return {
    all: { statement: JOB_SQL.countFailed, values: [] },
    class: { statement: JOB_SQL.countFailedOfClass, values: [filter.class] },
    code: { statement: JOB_SQL.countFailedWithCode, values: [filter.errorCode] },
    classCode: { statement: JOB_SQL.countFailedOfClassWithCode, values: [filter.class, filter.errorCode] },
  }[failedScope(filter)];
}

/** Queue them again (values after `now`). */
export function retryFailed(filter: FailedFilter): FilteredStatement {
  return {
    all: { statement: JOB_SQL.retryAllFailed, values: [] },
    class: { statement: JOB_SQL.retryClassFailed, values: [filter.class] },
    code: { statement: JOB_SQL.retryCodeFailed, values: [filter.errorCode] },
    classCode: { statement: JOB_SQL.retryClassCodeFailed, values: [filter.class, filter.errorCode] },
  }[failedScope(filter)];
}
