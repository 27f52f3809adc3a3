/**
 * `leasehold/testing`: run a handler in the test's own process, with the
 * context a child gives it (handlerContext) and no supervisor, config or
 * database. The payload goes through JSON as enqueue stores it, and through
 * the module's `parse` when a module is given, as in a child.
 */
import { randomUUID } from 'node:crypto';
import { handlerExports } from './config/handler-module.js';
import { coerceError } from './errors.js';
import {
  handlerContext,
  handlerLog,
  parsePayload,
  type Handler,
  type HandlerLog,
  type HandlerSetup,
  type HandlerTeardown,
  type JobParent,
  type PayloadParser,
} from './handler.js';
import { DEFAULT_PAYLOAD_LIMIT_BYTES } from './limits.js';
import { serialisePayload } from './queue/enqueue.js';
import type { JobClass, PayloadOf, ResultOf } from './job-types.js';
import { AttemptLogBuffer } from './store/job-logs.js';
import type { JobLogLine } from './store/data.js';

/** A handler module as a child loads it: the handler as its default export, and its optional `parse`, `setup` and `teardown`. */
export interface HandlerModule<C extends JobClass = JobClass, R = unknown> {
  default: Handler<C, R>;
  parse?: PayloadParser<C>;
  setup?: HandlerSetup<R>;
  teardown?: HandlerTeardown<R>;
}

export interface RunHandlerOptions<C extends JobClass = JobClass> {
  /** Abort it to abort ctx.signal, as a lost lease, a timeout, a cancel or a shutdown would. Default: never aborted. */
  signal?: AbortSignal;
  /** The job's id; default 1. */
  id?: number;
  /** The job's class; default 'test'. */
  class?: C;
  /** The attempt's number; default 1. */
  attempt?: number;
  /** ctx.leaseToken; default a random UUID. */
  leaseToken?: string;
  /** What ctx.parents() resolves to; default none. */
  parents?: JobParent[];
  /** ctx.resources. Default: what the module's `setup` returns (its `teardown` runs after the handler), else undefined. */
  resources?: unknown;
}

/** What the run left besides its outcome. */
interface Recorded {
  /** The ctx.log lines, as the child keeps them for the attempt (`fields` as JSON text, within the same cap). */
  logs: JobLogLine[];
  /** Each ctx.progress value, in order, as the job row would keep it (through JSON). */
  progress: unknown[];
}

/**
 * The handler's result, or what it threw, with the error code and retry
 * rule a child would record for it (INVALID_INPUT:PAYLOAD when `parse`
 * refused the payload).
 */
export type RunHandlerOutcome<R = unknown> = Recorded &
  ({ ok: true; result: R } | { ok: false; error: unknown; code: string; retryable: boolean });

/**
 * Run a handler once on a payload. Given a module (`{ default, parse }`,
 * such as `await import('./email.js')`), the payload goes through its
 * `parse` first, its `setup` runs before (unless `options.resources` is
 * given) and its `teardown` after, and the module's exports are checked as
 * a child checks them. Never rejects for what the handler does: a throw is
 * the outcome; a failing `setup` or `teardown` rejects.
 */
export async function runHandler<C extends JobClass>(
  handler: Handler<C>,
  payload: PayloadOf<C>,
  options?: RunHandlerOptions<C>,
): Promise<RunHandlerOutcome<ResultOf<C>>>;
export async function runHandler<C extends JobClass>(
  module: HandlerModule<C>,
  payload: unknown,
  options?: RunHandlerOptions<C>,
): Promise<RunHandlerOutcome<ResultOf<C>>>;
export async function runHandler(
  target: Handler | HandlerModule,
  payload: unknown,
  options: RunHandlerOptions = {},
): Promise<RunHandlerOutcome> {
  const { handler, parse, setup, teardown } =
    typeof target === 'function' ? { handler: target } : handlerExports(target, 'the handler module');
  const stored: unknown = JSON.parse(serialisePayload(payload ?? null, DEFAULT_PAYLOAD_LIMIT_BYTES));
  const lines = new AttemptLogBuffer();
  const progress: unknown[] = [];
  const signal = options.signal ?? new AbortController().signal;
  const recorded = () => ({ logs: lines.logs().lines, progress });
  const ownResources = !('resources' in options) && setup !== undefined;
  const log = (level: keyof HandlerLog, msg: string, fields: Record<string, unknown> | undefined) =>
    lines.add(level, msg, fields);
  const resources = ownResources
    ? await setup({ class: options.class ?? 'test', log: handlerLog(log) })
    : options.resources;
  const ctx = handlerContext({
    leaseToken: options.leaseToken ?? randomUUID(),
    signal: () => signal,
    heartbeat: async () => {},
    progress: async (json) => void progress.push(JSON.parse(json)),
    log,
    resources,
    // through JSON, as a child reads them from the store
    parents: async () =>
      (options.parents ?? []).map((parent) => ({
        ...parent,
        result: parent.result === null ? null : JSON.stringify(parent.result),
      })),
  });
  try {
    const job = {
      id: options.id ?? 1,
      class: options.class ?? 'test',
      payload: parse === undefined ? stored : await parsePayload(parse, stored),
      attempt: options.attempt ?? 1,
    };
    const result = await (handler as Handler)(job, ctx);
    return { ok: true, result, ...recorded() };
  } catch (error) {
    const { code, retryable } = coerceError(error);
    return { ok: false, error, code, retryable, ...recorded() };
  } finally {
    if (ownResources) await teardown?.(resources);
  }
}
