import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../src/log.js';
import type { PoolChild, RetireReason } from './supervised-child.js';

export interface RetireOptions {
  /** How long running jobs may take to finish before they are stopped and handed back. */
  graceMs: number;
  /** Aborted: stop waiting for running jobs (a second signal). */
  force: AbortSignal;
  logger: Logger;
  reason: RetireReason;
}

/**
 * Take children out of service without losing or repeating work, as a
 * shutdown does: drain (no more claims, running jobs finish, waiting ones go
 * back free), then after the grace stop them (running jobs go back free),
 * then kill what is left; its jobs go back free too (see ClassPool's
 * take-back). Resolves once every child has exited.
 */
export async function retireChildren(children: readonly PoolChild[], options: RetireOptions): Promise<void> {
  const { graceMs, force, logger, reason } = options;
  const live = () => children.filter((child) => child.alive);
  for (const child of live()) child.retire(reason, graceMs);
  await waitForExit(live(), graceMs, force);

  const remaining = live();
  if (remaining.length === 0) return;
  logger.warn(`grace over: stopping ${remaining.length} children, their jobs go back to the queue`, {
    event: 'SHUTDOWN_GRACE_OVER',
    reason,
  });
  for (const child of remaining) child.send({ type: 'stop', reason: `${reason} grace over` });
  await waitForExit(remaining, Math.max(...remaining.map((child) => child.config.kill_grace_seconds * 1000)), force);
  for (const child of live()) {
    logger.warn('child did not stop in time: killing it', {
      event: 'CHILD_KILLED',
      class: child.config.name,
      pid: child.pid,
      reason,
    });
    child.forceKill(reason, 'LEASE:RELEASED', reason);
  }
  await Promise.all(children.map((child) => child.exited));
}

/** Wait until the children exit, the time is up, or `force` says stop waiting. */
async function waitForExit(children: readonly PoolChild[], timeoutMs: number, force: AbortSignal): Promise<void> {
  if (children.length === 0 || force.aborted) return;
  // The timer ends with the wait: a supervisor started from code must leave its process free to exit.
  const waited = new AbortController();
  const forced = () => waited.abort();
  force.addEventListener('abort', forced, { once: true });
  try {
    await Promise.race([
      Promise.all(children.map((child) => child.exited)),
      sleep(timeoutMs, undefined, { signal: waited.signal }).catch(() => undefined),
    ]);
  } finally {
    force.removeEventListener('abort', forced);
    waited.abort();
  }
}
