/**
 * decideRestart's decision table: a child asked to stop stays down; one that
 * could not start disables its class; a kill or a clean exit unasked is
 * restarted at the base delay and is no crash; more than max_restarts
 * crashes within within_seconds is a crash loop; older crashes leave the
 * window; the delay doubles with each fruitless crash in a row of a slot, up
 * to a cap, and starts again once a child finished a job.
 */
import { describe, expect, it } from 'vitest';
import {
  decideRestart,
  isCrash,
  NO_RESTARTS_YET,
  RESTART_BASE_DELAY_MS,
  RESTART_MAX_DELAY_MS,
  type ExitFacts,
  type RestartDecision,
  type RestartHistory,
} from '../../supervisor/restart-policy.js';

const CRASH: ExitFacts = {
  code: 1,
  signal: null,
  askedToStop: false,
  killed: false,
  startupError: undefined,
  jobsFinished: 0,
};

/** The decisions on a run of exits of one slot, each at its time, each with the history the one before left. */
function decideAll(
  restart: { max_restarts: number; within_seconds: number },
  exits: { at: number; exit?: Partial<ExitFacts> }[],
): RestartDecision[] {
  let history: RestartHistory = NO_RESTARTS_YET;
  return exits.map(({ at, exit }) => {
    const decision = decideRestart({ ...CRASH, ...exit }, restart, history, at);
    history = decision.history;
    return decision;
  });
}

describe('decideRestart', () => {
  it('restarts up to max_restarts crashes within the window, and gives up on the next', () => {
    const decisions = decideAll(
      { max_restarts: 3, within_seconds: 60 },
      [0, 1_000, 2_000, 3_000].map((at) => ({ at, exit: { jobsFinished: 1 } })),
    );
    expect(decisions.map((decision) => decision.action)).toEqual(['restart', 'restart', 'restart', 'give-up']);
    expect(decisions[3]).toMatchObject({
      action: 'give-up',
      cause: 'crash-loop',
      reason: 'crash loop: 4 crashes within 60s',
      recentCrashes: 4,
    });
  });

  it('forgets crashes older than within_seconds', () => {
    const decisions = decideAll({ max_restarts: 2, within_seconds: 10 }, [
      { at: 0 },
      { at: 5_000 },
      // The first crash left the window at 10 s: two recent crashes, not three.
      { at: 10_000 },
      { at: 10_001 },
    ]);
    expect(decisions[2]).toMatchObject({ action: 'restart', history: { crashes: [5_000, 10_000] } });
    expect(decisions[3]).toMatchObject({ action: 'give-up', recentCrashes: 3 });
  });

  it('never restarts a crash with max_restarts 0', () => {
    expect(decideRestart(CRASH, { max_restarts: 0, within_seconds: 60 }, NO_RESTARTS_YET, 0).action).toBe('give-up');
  });

  it('doubles the delay with each fruitless crash in a row, up to the cap', () => {
    const delays = decideAll(
      { max_restarts: 100, within_seconds: 1 },
      Array.from({ length: 10 }, (_, index) => ({ at: index * 10_000 })),
    ).map((decision) => (decision.action === 'restart' ? decision.delayMs : undefined));
    expect(delays.slice(0, 4)).toEqual([
      RESTART_BASE_DELAY_MS,
      2 * RESTART_BASE_DELAY_MS,
      4 * RESTART_BASE_DELAY_MS,
      8 * RESTART_BASE_DELAY_MS,
    ]);
    expect(delays[9]).toBe(RESTART_MAX_DELAY_MS);
  });

  it('restarts at the base delay after a crash of a child that finished a job, and doubles from there', () => {
    const decisions = decideAll({ max_restarts: 100, within_seconds: 60 }, [
      { at: 0 },
      { at: 1, exit: { jobsFinished: 3 } },
      { at: 2 },
    ]);
    expect(decisions.map((decision) => decision.action === 'restart' && decision.delayMs)).toEqual([
      RESTART_BASE_DELAY_MS,
      RESTART_BASE_DELAY_MS,
      2 * RESTART_BASE_DELAY_MS,
    ]);
  });

  it('counts a signal as a crash, but neither a kill by the supervisor nor a clean exit unasked', () => {
    expect(isCrash({ code: null, killed: false })).toBe(true);
    expect(isCrash({ code: 137, killed: false })).toBe(true);
    expect(isCrash({ code: null, killed: true })).toBe(false);
    expect(isCrash({ code: 0, killed: false })).toBe(false);
    const restart = { max_restarts: 0, within_seconds: 60 };
    const history = { crashes: [5], fruitless: 3 };
    for (const exit of [
      { code: null, signal: 'SIGKILL' as const, killed: true },
      { code: 0, signal: null },
    ])
      expect(decideRestart({ ...CRASH, ...exit }, restart, history, 10)).toEqual({
        action: 'restart',
        delayMs: RESTART_BASE_DELAY_MS,
        history,
      });
  });

  it('leaves a child asked to stop down, whatever its end, and records no crash', () => {
    const history = { crashes: [5], fruitless: 3 };
    for (const exit of [{}, { startupError: 'no handler' }, { code: 0 }, { killed: true }])
      expect(
        decideRestart({ ...CRASH, ...exit, askedToStop: true }, { max_restarts: 0, within_seconds: 60 }, history, 10),
      ).toEqual({ action: 'none', history });
  });

  it('gives up on a child that could not start, with its error as the reason, and records no crash', () => {
    const history = { crashes: [5], fruitless: 3 };
    expect(
      decideRestart(
        { ...CRASH, startupError: 'handler.js has no default export' },
        { max_restarts: 5, within_seconds: 60 },
        history,
        10,
      ),
    ).toEqual({ action: 'give-up', cause: 'startup-failed', reason: 'handler.js has no default export', history });
  });
});
