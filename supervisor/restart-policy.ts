/**
 * What a class's pool does when one of its children ends: the whole exit in,
 * one decision out (as River's ClientRetryPolicy.NextRetry takes the job row).
 * The pool only carries the decision out and keeps the history it returns.
 */
import type { RestartConfig } from '../src/config/schema.js';
import { crashesWithin, isAbnormalExit, isCrashLoop } from '../src/crash-loop.js';

export const RESTART_BASE_DELAY_MS = 500;
export const RESTART_MAX_DELAY_MS = 30_000;

/** How a child ended, and what its supervisor knows of that end. */
export interface ExitFacts {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Its supervisor wants no child in its place now: shutting down, a reload scaled its slot away or replaced it. */
  askedToStop: boolean;
  /** Its supervisor killed it (runtime, memory, silence): an abnormal end, but not a crash. */
  killed: boolean;
  /** Why it could not start, if another try will not help (its handler does not load); a failed setup is a crash here. */
  startupError: string | undefined;
  /** How many jobs it finished. */
  jobsFinished: number;
}

/** What the decisions before this one leave behind. */
export interface RestartHistory {
  /** When the class's children crashed (ms): those still within its window at the last crash. */
  crashes: readonly number[];
  /** Crashes in a row of the slot's children that finished no job: the restart delay doubles with each. */
  fruitless: number;
}

/** A new class's history, and a slot's. */
export const NO_RESTARTS_YET: RestartHistory = Object.freeze({ crashes: [], fruitless: 0 });

/** Each carries the history to keep for the next decision. */
export type RestartDecision =
  /** Start a child in its place after `delayMs`. */
  | { action: 'restart'; delayMs: number; history: RestartHistory }
  /** Disable the class for `reason`: it gets no children until a reload changes its config. */
  | { action: 'give-up'; cause: 'startup-failed'; reason: string; history: RestartHistory }
  | { action: 'give-up'; cause: 'crash-loop'; reason: string; recentCrashes: number; history: RestartHistory }
  /** Its place stays empty, as its supervisor asked. */
  | { action: 'none'; history: RestartHistory };

/** A crash: an abnormal exit (a code but 0, or a signal) that its supervisor did not cause. */
export function isCrash(exit: Pick<ExitFacts, 'code' | 'killed'>): boolean {
  return !exit.killed && isAbnormalExit(exit.code);
}

/**
 * The rules, in order: a child its supervisor asked to stop stays down; one
 * that could not start disables its class (restarting will not help); more
 * than max_restarts crashes within within_seconds is a crash loop, and the
 * class is disabled; any other end is restarted, a crash after a delay that
 * doubles with each crash in a row of a slot whose children finished no job
 * (a child that did useful work before dying restarts at the base delay,
 * like PM2's backoff that resets once the app has run), up to a cap.
 */
export function decideRestart(
  exit: ExitFacts,
  restart: RestartConfig,
  history: RestartHistory,
  now: number,
): RestartDecision {
  if (exit.askedToStop) return { action: 'none', history };
  if (exit.startupError !== undefined)
    return { action: 'give-up', cause: 'startup-failed', reason: exit.startupError, history };
  if (!isCrash(exit)) return { action: 'restart', delayMs: RESTART_BASE_DELAY_MS, history };
  const next = {
    crashes: [...crashesWithin(history.crashes, now, restart), now],
    fruitless: exit.jobsFinished === 0 ? history.fruitless + 1 : 1,
  };
  const recentCrashes = next.crashes.length;
  if (isCrashLoop(recentCrashes, restart)) {
    const reason = `crash loop: ${recentCrashes} crashes within ${restart.within_seconds}s`;
    return { action: 'give-up', cause: 'crash-loop', reason, recentCrashes, history: next };
  }
  const delayMs = Math.min(RESTART_MAX_DELAY_MS, RESTART_BASE_DELAY_MS * 2 ** Math.max(0, next.fruitless - 1));
  return { action: 'restart', delayMs, history: next };
}
