import { pathToFileURL } from 'node:url';
import { LeaseholdError } from '../src/errors.js';

export interface HandlerJob {
  id: number;
  class: string;
  payload: unknown;
  attempt: number;
}

export interface HandlerLog {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface HandlerContext {
  /** Aborted when the lease is lost, the runtime is exceeded, the job is cancelled, or shutdown begins. */
  signal: AbortSignal;
  /** Renew the lease now (the child also renews it every heartbeat_seconds). */
  heartbeat(): Promise<void>;
  /** Record progress (any JSON value) on the job row. */
  progress(value: unknown): Promise<void>;
  log: HandlerLog;
  /** This claim's fencing token: use it to make writes to other systems idempotent. */
  leaseToken: string;
}

export type Handler = (job: HandlerJob, ctx: HandlerContext) => unknown;

/** Import a handler module and check that its default export is a function. */
export async function loadHandler(file: string): Promise<Handler> {
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    throw new LeaseholdError('HANDLER:LOAD_FAILED', `cannot load handler ${file}: ${(error as Error).message}`, { retryable: false, cause: error });
  }
  if (typeof module.default !== 'function') {
    throw new LeaseholdError('HANDLER:NO_DEFAULT_EXPORT', `handler ${file} has no default export function`, { retryable: false });
  }
  return module.default as Handler;
}
