/**
 * The dashboard's URL parameters, read strictly: a malformed one is a 400
 * page that names it and says what it takes; an empty one (a form's blank
 * field) is absent.
 */
import { JOB_STATUSES, type BulkBounds, type FailedFilter, type JobStatus } from '../store/types.js';
import type { JobsQuery } from './data.js';

/** A parameter the request got wrong: the 400 page shows the message. */
export class BadParameter extends Error {
  constructor(
    readonly parameter: string,
    expected: string,
    got: string,
  ) {
    super(`${parameter} must be ${expected}, got ${JSON.stringify(got)}`);
    this.name = 'BadParameter';
  }
}

export const JOBS_PAGE_SIZE = 50;
const CLASS_NAME = /^[A-Za-z0-9_.-]+$/;
const ERROR_CODE = /^[A-Z][A-Z0-9_]*:[A-Z0-9_]+$/;
const ID = /^[1-9][0-9]{0,15}$/;

type Query = (name: string) => string | undefined;

function given(query: Query, name: string): string | undefined {
  const value = query(name)?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** A job id in a path or a parameter: a positive integer in decimal. */
export function parseJobId(raw: string, parameter = 'job id'): number {
  const id = ID.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(id)) throw new BadParameter(parameter, 'a positive integer', raw);
  return id;
}

/** A class name in a path. */
export function parseClassName(raw: string): string {
  if (!CLASS_NAME.test(raw)) throw new BadParameter('class', 'a class name (letters, digits, "_", "." or "-")', raw);
  return raw;
}

export function parseClass(query: Query): string | undefined {
  const value = given(query, 'class');
  return value === undefined ? undefined : parseClassName(value);
}

export function parseErrorCode(query: Query): string | undefined {
  const value = given(query, 'error_code');
  if (value !== undefined && !ERROR_CODE.test(value))
    throw new BadParameter('error_code', 'an error code such as WORKER:CRASHED', value);
  return value;
}

export function parseStatus(query: Query): JobStatus | undefined {
  const value = given(query, 'status');
  if (value === undefined) return undefined;
  const status = JOB_STATUSES.find((s) => s === value.toUpperCase());
  if (status === undefined) throw new BadParameter('status', `one of ${JOB_STATUSES.join(', ')}`, value);
  return status;
}

/** The jobs page's filters and keyset cursor (`before`: the last id of the page before). */
export function parseJobsQuery(query: Query): JobsQuery {
  const before = given(query, 'before');
  return {
    class: parseClass(query),
    status: parseStatus(query),
    errorCode: parseErrorCode(query),
    ...(before === undefined ? {} : { beforeId: parseJobId(before, 'before') }),
    limit: JOBS_PAGE_SIZE,
  };
}

/** The bulk retry's filter: FAILED jobs of a class, of an error code, of both, or all of them. */
export function parseRetryFilter(query: Query): FailedFilter {
  const filter: FailedFilter = {};
  const jobClass = parseClass(query);
  const errorCode = parseErrorCode(query);
  if (jobClass !== undefined) filter.class = jobClass;
  if (errorCode !== undefined) filter.errorCode = errorCode;
  return filter;
}

/** A bulk action's bounds, as its confirmation's form sends them: the newest job it counted, and the count. */
export function parseBulkBounds(query: Query): Required<BulkBounds> {
  return {
    throughId: parseJobId(given(query, 'through_id') ?? '', 'through_id'),
    limit: parseJobId(given(query, 'count') ?? '', 'count'),
  };
}

/** The jobs page's URL for a query (the page's own, or the next one's with its cursor). */
export function jobsUrl(query: Partial<JobsQuery>): string {
  const params = new URLSearchParams();
  if (query.class !== undefined) params.set('class', query.class);
  if (query.status !== undefined) params.set('status', query.status);
  if (query.errorCode !== undefined) params.set('error_code', query.errorCode);
  if (query.beforeId !== undefined) params.set('before', String(query.beforeId));
  const search = params.toString();
  return search === '' ? '/jobs' : `/jobs?${search}`;
}

/** The fields of a bulk action's filter, as its URL and its form carry them. */
export function filterFields(filter: FailedFilter): Record<string, string> {
  const fields: Record<string, string> = {};
  if (filter.class !== undefined) fields.class = filter.class;
  if (filter.errorCode !== undefined) fields.error_code = filter.errorCode;
  return fields;
}

function withFilter(path: string, filter: FailedFilter): string {
  const search = new URLSearchParams(filterFields(filter)).toString();
  return search === '' ? path : `${path}?${search}`;
}

/** The bulk retry's confirmation URL for a filter. */
export function retryFailedUrl(filter: FailedFilter): string {
  return withFilter('/retry-failed', filter);
}

/** The bulk cancel's confirmation URL for the QUEUED jobs of a class, or all of them. */
export function cancelQueuedUrl(jobClass: string | undefined): string {
  return withFilter('/cancel-queued', { class: jobClass });
}
