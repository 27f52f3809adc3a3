/**
 * Tracing is optional: `@opentelemetry/api` is a peer dependency an
 * application may not have. It is looked for once, with a dynamic import that
 * may fail; only when it is there is ./spans.js (which imports it) loaded.
 * Without it, nothing of OpenTelemetry is loaded and every call here is a
 * check of one variable. Only what enqueues or runs jobs looks (a Queue, a
 * child, the supervisor, the CLI's enqueue when tracingWanted): the other
 * commands load nothing.
 */
import type { NewJob } from '../store/types.js';
import type { Tracing } from './spans.js';

let loaded: Tracing | undefined;
let loading: Promise<Tracing | undefined> | undefined;

/** Look for the API (once); resolves to the tracing it gives, or undefined without it. */
export function loadTracing(): Promise<Tracing | undefined> {
  return (loading ??= import('@opentelemetry/api').then(
    async () => (loaded = (await import('./spans.js')).openTracing()),
    () => undefined,
  ));
}

/**
 * Whether a one-shot command has a trace to join or spans to send: a
 * TRACEPARENT in its environment, or an SDK registered in the process (the
 * API keeps it under this global symbol, set before the command runs by an
 * `--import` of the SDK). Without either its spans would go nowhere, and
 * loading the API is a fifth of a short command's modules.
 */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.TRACEPARENT) || Symbol.for('opentelemetry.js.api.1') in globalThis;
}

/** The tracing loaded so far: undefined before loadTracing resolves, or without the API. */
export function tracing(): Tracing | undefined {
  return loaded;
}

/** An insert's result as the ids it gave its jobs, in order: the usual InsertedJob[]. */
const insertedIds = (result: unknown) => result as readonly { id: number }[];

/**
 * Every enqueue path's insert: inside `send <class>` spans, which give the
 * jobs their trace context to store, when tracing is loaded; as it is, else.
 */
export function sendTraced<R>(
  jobs: NewJob[],
  insert: () => R,
  idsOf: (result: Awaited<R>) => readonly { id: number }[] = insertedIds,
): R {
  return loaded === undefined ? insert() : loaded.send(jobs, insert, idsOf);
}

/**
 * A command line's enqueues join the trace its environment names, as
 * OpenTelemetry's environment carriers have it: TRACEPARENT, and TRACESTATE
 * with it. Only for one-shot commands: a supervisor started from a traced
 * shell would otherwise put every scheduled job in that one trace.
 */
export function adoptEnvironmentTrace(env: NodeJS.ProcessEnv = process.env): void {
  if (loaded === undefined || !env.TRACEPARENT) return;
  loaded.adoptParent(env.TRACESTATE ? `${env.TRACEPARENT} ${env.TRACESTATE}` : env.TRACEPARENT);
}

/** How long a process about to exit waits for its spans to be exported. */
const FLUSH_DEADLINE_MS = 1_000;

/** Before a process exits: its SDK's buffered spans exported, or given up on after FLUSH_DEADLINE_MS. */
export async function flushTracing(): Promise<void> {
  if (loaded === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_DEADLINE_MS)));
  await Promise.race([loaded.flush().catch(() => undefined), deadline]);
  clearTimeout(timer);
}
