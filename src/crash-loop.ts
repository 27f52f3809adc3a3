/**
 * What a child's end says about its class: an abnormal exit, and the two
 * crash-loop rules read over a class's restart window.
 *
 * The two rules differ, on purpose. The supervisor's (isCrashLoop) decides:
 * it gives up on a class after more than `restart.max_restarts` crashes of
 * its own children, a crash being an abnormal exit it did not cause (its
 * kills for runtime, memory or silence are not crashes). The dashboard's
 * (CRASHING_EXITS) warns: at least that many abnormal exits, kills included,
 * of the children of every live supervisor together, which it reads from the
 * database on any host, before (or without) any supervisor giving up. Both
 * count over the same window, crashWindowMs (the dashboard's takes in its
 * first millisecond, as its SQL's `exited_at >= since` does; crashesWithin
 * does not).
 */
/** A class's `restart` config (queue.yaml). */
export interface RestartLimits {
  max_restarts: number;
  within_seconds: number;
}

/** The exit code of a child that ended as it should (drained, stopped, or done); CHILD_EXIT.OK is this. */
export const CLEAN_EXIT_CODE = 0;

/**
 * An abnormal exit: any code but CLEAN_EXIT_CODE, or none (ended by a signal, or
 * found gone by a later supervisor). Each driver's SQL says the same once, as
 * ABNORMAL_EXIT in its sql/workers.ts.
 */
export function isAbnormalExit(code: number | null): boolean {
  return code !== CLEAN_EXIT_CODE;
}

/** The window, in ms, over which a class's crashes (and the dashboard's abnormal exits) are counted. */
export function crashWindowMs(restart: Pick<RestartLimits, 'within_seconds'>): number {
  return restart.within_seconds * 1000;
}

/** The times (ms) of `crashes` still within the window at `now`: newer than its start. */
export function crashesWithin(
  crashes: readonly number[],
  now: number,
  restart: Pick<RestartLimits, 'within_seconds'>,
): number[] {
  const windowStart = now - crashWindowMs(restart);
  return crashes.filter((at) => at > windowStart);
}

/** The supervisor's rule: more than max_restarts crashes within the window, and it restarts the class no more. */
export function isCrashLoop(recentCrashes: number, restart: Pick<RestartLimits, 'max_restarts'>): boolean {
  return recentCrashes > restart.max_restarts;
}

/** The dashboard's rule: at least this many abnormal exits of a class within its window show it as in a crash loop. */
export const CRASHING_EXITS = 2;
