// Demo handler: "sends" an email after a short random delay, reporting progress.
import { setTimeout as sleep } from 'node:timers/promises';

const STEPS = ['render', 'connect', 'send'];

export default async function email(job, ctx) {
  const to = job.payload?.to ?? 'someone@example.com';
  for (const [index, step] of STEPS.entries()) {
    await pause(100 + Math.random() * 400, ctx.signal);
    await ctx.progress({ step, done: index + 1, total: STEPS.length });
  }
  ctx.log.info(`sent to ${to}`);
  return { delivered_to: to, message_id: `demo-${job.id}-${job.attempt}` };
}

/** Waits ms; when the job is aborted, rejects with the abort's reason rather than a bare AbortError. */
function pause(ms, signal) {
  return sleep(ms, undefined, { signal }).catch((error) => {
    signal.throwIfAborted();
    throw error;
  });
}
