import { describe, expect, it } from 'vitest';
import { formatStoredContext, parseStoredContext, traceLogFields } from '../../src/tracing/traceparent.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

describe('the stored trace context (jobs.traceparent)', () => {
  it('is a W3C traceparent, then a space and the tracestate when there is one, both ways', () => {
    const plain = { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1 };
    expect(formatStoredContext(plain)).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);
    expect(parseStoredContext(`00-${TRACE_ID}-${SPAN_ID}-01`)).toEqual({ ...plain, traceState: undefined });
    const withState = { ...plain, traceFlags: 0, traceState: 'a=1, b=2' };
    expect(parseStoredContext(formatStoredContext(withState))).toEqual(withState);
  });

  it('reads nothing from no context, a malformed one, or version ff', () => {
    for (const stored of [null, undefined, '', 'x', `00-${TRACE_ID}-${SPAN_ID}`, `ff-${TRACE_ID}-${SPAN_ID}-01`])
      expect(parseStoredContext(stored)).toBeUndefined();
    expect(traceLogFields(null)).toEqual({});
    expect(traceLogFields(`00-${TRACE_ID}-${SPAN_ID}-01 a=1`)).toEqual({ trace_id: TRACE_ID });
  });
});
