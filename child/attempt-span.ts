/**
 * An attempt's `process <class>` span (../src/tracing/spans.ts), as a run
 * sees it: the same calls whether tracing is loaded or not, so job-run.ts
 * has no branch for it. Without tracing, each call does nothing.
 */
import type { ClaimedJob, Verdict } from '../src/store/types.js';
import type { AttemptSpan } from '../src/tracing/spans.js';
import { tracing } from '../src/tracing/gate.js';

const NO_SPAN: AttemptSpan = {
  logFields: {},
  run: (body) => body(),
  end: () => undefined,
};

export function attemptSpan(job: ClaimedJob): AttemptSpan {
  return tracing()?.attempt(job) ?? NO_SPAN;
}

/** End the span as the run's verdict says. */
export function endAttemptSpan(span: AttemptSpan, { verdict }: { verdict: Verdict }): void {
  if (verdict.type === 'fail') {
    const { code, detail, stack } = verdict.error;
    span.end({ outcome: 'failed', error: { code, message: detail, stack } });
  } else span.end({ outcome: verdict.type === 'complete' ? 'succeeded' : 'released' });
}
