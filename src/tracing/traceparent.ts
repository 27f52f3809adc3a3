/**
 * The form a job's trace context is stored in (`jobs.traceparent`): the W3C
 * `traceparent` header, then a space and the `tracestate` header when there
 * is one (a traceparent has no space in it). Plain strings: reading a trace
 * id off a stored context needs no OpenTelemetry.
 */

/** version-traceid-spanid-flags, lower-case hex. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export interface StoredTraceContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState?: string;
}

export function formatStoredContext(context: StoredTraceContext): string {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  const header = `00-${context.traceId}-${context.spanId}-${flags}`;
  return context.traceState ? `${header} ${context.traceState}` : header;
}

/** Undefined for no context, or one that is not a W3C traceparent. */
export function parseStoredContext(stored: string | null | undefined): StoredTraceContext | undefined {
  if (!stored) return undefined;
  const space = stored.indexOf(' ');
  const match = TRACEPARENT.exec(space === -1 ? stored : stored.slice(0, space));
  if (match === null || match[1] === 'ff') return undefined;
  const traceState = space === -1 ? undefined : stored.slice(space + 1);
  return { traceId: match[2]!, spanId: match[3]!, traceFlags: parseInt(match[4]!, 16), traceState };
}

/** `{ trace_id }` for a log line about a job with a stored context, else nothing. */
export function traceLogFields(stored: string | null | undefined): { trace_id?: string } {
  const context = parseStoredContext(stored);
  return context === undefined ? {} : { trace_id: context.traceId };
}
