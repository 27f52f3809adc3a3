import { importHandler } from '../src/config/handler-module.js';

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

/** Import a handler module and check that its default export is a function (the rule the config check applies too). */
export async function loadHandler(file: string): Promise<Handler> {
  return (await importHandler(file)) as Handler;
}
