// Demo handler: a slow job (a few seconds) that heartbeats and reports progress
// as it goes, and stops promptly when ctx.signal is aborted.
import { setTimeout as sleep } from 'node:timers/promises';

const STEP_MS = 500;

export default async function report(job, ctx) {
  const steps = Number.isInteger(job.payload?.steps) ? job.payload.steps : 6 + Math.floor(Math.random() * 6);
  let rows = 0;
  for (let step = 1; step <= steps; step++) {
    await pause(STEP_MS, ctx.signal);
    rows += 1000 + Math.floor(Math.random() * 1000);
    await ctx.heartbeat();
    await ctx.progress({ done: step, total: steps });
  }
  ctx.log.info(`report ready: ${rows} rows in ${steps} steps`);
  return { rows, steps };
}

/** Waits ms; when the job is aborted, rejects with the abort's reason rather than a bare AbortError. */
function pause(ms, signal) {
  return sleep(ms, undefined, { signal }).catch((error) => {
    signal.throwIfAborted();
    throw error;
  });
}
