// Demo handler: fails about 30% of the time with a retryable upstream error,
// to show retries with backoff and, when they run out, the dead letter (FAILED).
import { setTimeout as sleep } from 'node:timers/promises';

const FAILURE_RATE = 0.3;

export default async function flaky(job, ctx) {
  await pause(50 + Math.random() * 200, ctx.signal);
  if (Math.random() < FAILURE_RATE) {
    const error = new Error(`upstream unavailable (attempt ${job.attempt})`);
    error.code = 'UPSTREAM:UNAVAILABLE';
    throw error;
  }
  return { ok: true, attempt: job.attempt };
}

/** Waits ms; when the job is aborted, rejects with the abort's reason rather than a bare AbortError. */
function pause(ms, signal) {
  return sleep(ms, undefined, { signal }).catch((error) => {
    signal.throwIfAborted();
    throw error;
  });
}
