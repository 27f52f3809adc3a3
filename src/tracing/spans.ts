/**
 * leasehold's spans, on OpenTelemetry's API (loaded only through ./gate.ts).
 * Names and attributes follow the messaging semantic conventions: an enqueue
 * is `send <class>` (PRODUCER), each attempt `process <class>` (CONSUMER),
 * whose parent is the context stored with the job by its enqueue. With no
 * SDK registered the API hands out non-recording spans: near-free.
 */
import {
  context,
  createTraceState,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type ProxyTracerProvider,
  type Span,
} from '@opentelemetry/api';
import type { NewJob } from '../store/types.js';
import { formatStoredContext, parseStoredContext } from './traceparent.js';

/** How an attempt ended, as its span records it. */
export interface AttemptEnd {
  outcome: 'succeeded' | 'failed' | 'released';
  error?: { code: string; message: string; stack?: string };
}

/** One attempt's span in the child: the handler runs inside it. */
export interface AttemptSpan {
  /** Run the attempt's body in the span's context, so the handler's own spans nest under it. */
  run<T>(body: () => T): T;
  /** End the span (once: later calls do nothing). */
  end(how: AttemptEnd): void;
  /** `{ trace_id }` for the attempt's log lines. */
  readonly logFields: { trace_id?: string };
}

/** An attempt whose holder could not end its span (it died, or went silent): the supervisor ends it. */
export interface TakenBackAttempt {
  id: number;
  class: string;
  attempt: number;
  traceparent: string | null;
  /** When the attempt began, in ms since the epoch. */
  startedAt: number;
}

/**
 * How a taken-back attempt ended: with `error` (a crash, an expired lease),
 * status ERROR; released (its job went back unspent), with the reason.
 */
export type TakenBackEnd =
  | { outcome: 'crashed' | 'expired'; error: { code: string; message: string } }
  | { outcome: 'released'; reason: string };

export interface Tracing {
  /**
   * Run `insert` with a `send <class>` span per job open, each job given its
   * span's context to store; `idsOf` names the ids the insert gave them.
   */
  send<R>(jobs: NewJob[], insert: () => R, idsOf: (result: Awaited<R>) => readonly { id: number }[]): R;
  /**
   * The parent of send spans opened outside any span, in the stored form:
   * a command line's, from the TRACEPARENT its environment carries.
   */
  adoptParent(stored: string): void;
  attempt(job: { id: number; class: string; attempt: number; traceparent: string | null }): AttemptSpan;
  /** Emit the span of an attempt its holder could not end: its stored parent, its start, ended as `end` says. */
  takenBack(job: TakenBackAttempt, end: TakenBackEnd): void;
  /** Hand the SDK's buffered spans to its exporter (before a process exits), when the SDK can. */
  flush(): Promise<void>;
}

const MESSAGING_SYSTEM = 'leasehold';

function messagingAttributes(operation: 'send' | 'process', jobClass: string): Attributes {
  return {
    'messaging.system': MESSAGING_SYSTEM,
    'messaging.operation.type': operation,
    'messaging.operation.name': operation,
    'messaging.destination.name': jobClass,
  };
}

/**
 * An attempt's attributes, written out rather than spread from
 * messagingAttributes: V8 copies such a spread of dotted keys on a slow
 * path, on every attempt (docs/performance.md, section 22).
 */
function processAttributes(job: { id: number; class: string; attempt: number }): Attributes {
  return {
    'messaging.system': MESSAGING_SYSTEM,
    'messaging.operation.type': 'process',
    'messaging.operation.name': 'process',
    'messaging.destination.name': job.class,
    'messaging.message.id': String(job.id),
    'leasehold.job.attempt': job.attempt,
  };
}

/** The context a stored traceparent names, as a remote parent; the root context without one. */
function storedParent(stored: string | null): Context {
  const parsed = parseStoredContext(stored);
  if (parsed === undefined) return ROOT_CONTEXT;
  const { traceState, ...ids } = parsed;
  const spanContext = {
    ...ids,
    isRemote: true,
    ...(traceState === undefined ? {} : { traceState: createTraceState(traceState) }),
  };
  return trace.setSpanContext(ROOT_CONTEXT, spanContext);
}

/** A span's context in the stored form; null when it carries no trace. */
function storedContextOf(span: Span): string | null {
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return null;
  return formatStoredContext({ ...spanContext, traceState: spanContext.traceState?.serialize() });
}

function endWithError(span: Span, error: { code: string; message: string; stack?: string }): void {
  span.recordException({ name: error.code, message: error.message, stack: error.stack });
  span.setAttribute('error.type', error.code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  span.end();
}

export function openTracing(): Tracing {
  const tracer = trace.getTracer('leasehold');
  let adopted: Context | undefined;
  const sendParent = () => {
    const active = context.active();
    return adopted === undefined || trace.getSpan(active) !== undefined ? active : adopted;
  };

  function send<R>(jobs: NewJob[], insert: () => R, idsOf: (result: Awaited<R>) => readonly { id: number }[]): R {
    const parent = sendParent();
    const spans = jobs.map((job) => {
      const span = tracer.startSpan(
        `send ${job.class}`,
        { kind: SpanKind.PRODUCER, attributes: messagingAttributes('send', job.class) },
        parent,
      );
      job.traceparent = storedContextOf(span);
      return span;
    });
    const sent = (result: Awaited<R>) => {
      idsOf(result).forEach((inserted, index) => {
        spans[index]?.setAttribute('messaging.message.id', String(inserted.id));
        spans[index]?.end();
      });
      return result;
    };
    const failed = (error: unknown): never => {
      const { code = 'ERROR', message = String(error) } = error as { code?: string; message?: string };
      for (const span of spans) endWithError(span, { code, message });
      throw error;
    };
    // One job's insert runs in its span's context (a database client's own spans nest under it).
    const run = () => (spans.length === 1 ? context.with(trace.setSpan(parent, spans[0]!), insert) : insert());
    let result: R;
    try {
      result = run();
    } catch (error) {
      return failed(error);
    }
    if (result instanceof Promise) return result.then(sent, failed) as R;
    return sent(result as Awaited<R>) as R;
  }

  function attempt(job: { id: number; class: string; attempt: number; traceparent: string | null }): AttemptSpan {
    const parent = storedParent(job.traceparent);
    const span = tracer.startSpan(
      `process ${job.class}`,
      { kind: SpanKind.CONSUMER, attributes: processAttributes(job) },
      parent,
    );
    const spanContext = span.spanContext();
    const logFields = isSpanContextValid(spanContext) ? { trace_id: spanContext.traceId } : {};
    let ended = false;
    return {
      logFields,
      run: (body) => context.with(trace.setSpan(parent, span), body),
      end(how) {
        if (ended) return;
        ended = true;
        span.setAttribute('leasehold.job.outcome', how.outcome);
        if (how.error === undefined) span.end();
        else endWithError(span, how.error);
      },
    };
  }

  function takenBack(job: TakenBackAttempt, end: TakenBackEnd): void {
    const span = tracer.startSpan(
      `process ${job.class}`,
      { kind: SpanKind.CONSUMER, startTime: job.startedAt, attributes: processAttributes(job) },
      storedParent(job.traceparent),
    );
    span.setAttribute('leasehold.job.outcome', end.outcome);
    if (end.outcome !== 'released') return endWithError(span, end.error);
    span.setAttribute('leasehold.job.release_reason', end.reason);
    span.end();
  }

  async function flush(): Promise<void> {
    const provider = trace.getTracerProvider() as ProxyTracerProvider;
    const sdk = provider.getDelegate() as { forceFlush?: () => Promise<void> };
    await sdk.forceFlush?.();
  }

  function adoptParent(stored: string): void {
    const parent = storedParent(stored);
    adopted = parent === ROOT_CONTEXT ? undefined : parent;
  }

  return { send, adoptParent, attempt, takenBack, flush };
}
