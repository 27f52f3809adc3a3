/**
 * What a handler is, as the child runs it: the job it is given, its
 * context, and `defineHandler`, which types both from the application's
 * Jobs registry (job-types.ts).
 */
import { LeaseholdError } from './errors.js';
import type { JobClass, PayloadOf, ResultOf } from './job-types.js';

/** The job a handler runs: over a union of classes, a union discriminated by `class`. */
export type HandlerJob<C extends JobClass = JobClass> = C extends unknown
  ? { id: number; class: C; payload: PayloadOf<C>; attempt: number }
  : never;

export interface HandlerLog {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** `R`: what the handler module's `setup` returns, given to every job of the child as `resources`. */
export interface HandlerContext<R = unknown> {
  /** Aborted when the lease is lost, the runtime is exceeded, the job is cancelled, or shutdown begins. */
  signal: AbortSignal;
  /** Renew the lease now (the child also renews it every heartbeat_seconds). */
  heartbeat(): Promise<void>;
  /** Record progress (any JSON value) on the job row. */
  progress(value: unknown): Promise<void>;
  log: HandlerLog;
  /** This claim's fencing token: use it to make writes to other systems idempotent. */
  leaseToken: string;
  /** The jobs this one waited for (`dependsOn`), by id, with their outcomes; none for a job without parents. */
  parents(): Promise<JobParent[]>;
  /** What the handler module's `setup` returned in this child (undefined without a `setup`). */
  resources: R;
}

/** A parent of the job a handler runs: its outcome and its result (parsed JSON, null when none). */
export interface JobParent {
  id: number;
  class: string;
  status: string;
  result: unknown;
  error_code: string | null;
}

/** A handler module's default export: what it returns (or resolves to) is the job's result. */
export type Handler<C extends JobClass = JobClass, R = unknown> = (
  job: HandlerJob<C>,
  ctx: HandlerContext<R>,
) => ResultOf<C> | Promise<ResultOf<C>>;

/**
 * A handler of one class, typed from the Jobs registry: its job's payload
 * and its result; `R`, the resources, is inferred from the type given to
 * `ctx`. Returns the function itself, to be the module's default export;
 * the class is for the compiler only.
 */
export function defineHandler<C extends JobClass, R = unknown>(_jobClass: C, handler: Handler<C, R>): Handler<C, R> {
  return handler;
}

/** What a handler module's `setup` is given: its class, and a log whose lines carry no job. */
export interface SetupContext {
  class: string;
  log: HandlerLog;
}

/** A handler module's optional `setup` export: run once per child before its first job; what it returns is `ctx.resources`. */
export type HandlerSetup<R = unknown> = (ctx: SetupContext) => R | Promise<R>;

/** A handler module's optional `teardown` export: run once on drain, after the last job, with what `setup` returned. */
export type HandlerTeardown<R = unknown> = (resources: R) => unknown;

/**
 * A middleware module's default export: runs around the handler (and the
 * middleware inside it); `next()` resolves with the result or throws the
 * failure, and what this returns or throws is the outcome.
 */
export type Middleware<R = unknown> = (
  job: HandlerJob,
  ctx: HandlerContext<R>,
  next: () => Promise<unknown>,
) => Promise<unknown>;

/**
 * A handler module's optional `parse` export: given the stored payload, it
 * returns the payload the handler gets, or throws to refuse it.
 */
export type PayloadParser<C extends JobClass = JobClass> = (payload: unknown) => PayloadOf<C> | Promise<PayloadOf<C>>;

/**
 * The payload through a module's `parse`. A refusal is the producer's
 * fault, so it fails the job with INVALID_INPUT:PAYLOAD and spends no retry:
 * another attempt would be refused alike.
 */
export async function parsePayload(parse: PayloadParser, payload: unknown): Promise<unknown> {
  try {
    return await parse(payload);
  } catch (error) {
    const issues = schemaIssues(error);
    const why =
      issues !== undefined ? `\n${issues.join('\n')}` : ` ${error instanceof Error ? error.message : String(error)}`;
    throw new LeaseholdError('INVALID_INPUT:PAYLOAD', `parse refused the payload:${why}`, {
      retryable: false,
      cause: error,
    });
  }
}

/** A Standard Schema issue (zod, valibot, ArkType): its message, and the path to the field it is about. */
interface SchemaIssue {
  message: string;
  path?: readonly (PropertyKey | { key: PropertyKey })[];
}

/**
 * A schema library's refusal, one line per issue naming its field
 * (`payload.items[0].sku: required`); undefined for any other error. Their
 * own messages are a dump of every issue (ZodError's is JSON), whose first
 * line alone says nothing.
 */
function schemaIssues(error: unknown): string[] | undefined {
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return undefined;
  if (!issues.every((issue: Partial<SchemaIssue> | null) => typeof issue?.message === 'string')) return undefined;
  return (issues as SchemaIssue[]).map((issue) => `${fieldPath(issue.path ?? [])}: ${issue.message}`);
}

function fieldPath(path: readonly (PropertyKey | { key: PropertyKey })[]): string {
  return path
    .map((segment) => (typeof segment === 'object' ? segment.key : segment))
    .reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : `${text}.${String(key)}`), 'payload');
}

/** The parts of a handler's context that differ between a child and runHandler (src/testing.ts). */
export interface ContextParts {
  leaseToken: string;
  /** Called when the handler reads ctx.signal, so that a handler that never looks costs no AbortController. */
  signal: () => AbortSignal;
  heartbeat: () => Promise<void>;
  /** The progress as the job row keeps it: JSON text (null for undefined). */
  progress: (json: string) => Promise<void>;
  /** Each ctx.log line, its message made a string. */
  log: (level: keyof HandlerLog, msg: string, fields: Record<string, unknown> | undefined) => void;
  /** The parents as the store keeps them (results as JSON text). */
  parents: () => Promise<StoredParent[]>;
  resources: unknown;
}

type StoredParent = Omit<JobParent, 'result'> & { result: string | null };

/** A HandlerLog that hands each line to `log`, its message made a string. */
export function handlerLog(log: ContextParts['log']): HandlerLog {
  const line = (level: keyof HandlerLog) => (msg: string, fields?: Record<string, unknown>) =>
    log(level, String(msg), fields);
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
}

/** The context a handler is given, in a child and in runHandler alike. */
export function handlerContext(parts: ContextParts): HandlerContext {
  return {
    get signal() {
      return parts.signal();
    },
    leaseToken: parts.leaseToken,
    resources: parts.resources,
    log: handlerLog(parts.log),
    heartbeat: () => parts.heartbeat(),
    progress: async (value: unknown) => parts.progress(JSON.stringify(value ?? null)),
    parents: async () =>
      (await parts.parents()).map((parent) => ({
        ...parent,
        result: parent.result === null ? null : (JSON.parse(parent.result) as unknown),
      })),
  };
}
