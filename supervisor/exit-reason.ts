import { CHILD_EXIT } from '../src/ipc/protocol.js';
import type { UncaughtError } from './last-words.js';

/** An exit code or signal in words, with what it probably means, for the log and for error_detail. */
export function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal !== null) {
    const meaning: Partial<Record<NodeJS.Signals, string>> = {
      SIGKILL: 'killed outright (our own kill, an operator, or the kernel OOM killer)',
      SIGTERM: 'asked to terminate',
      SIGABRT: 'aborted (process.abort() or a fatal native error)',
      SIGSEGV: 'segmentation fault in native code',
      SIGBUS: 'bus error in native code',
      SIGINT: 'interrupted',
    };
    return `signal ${signal}: ${meaning[signal] ?? 'terminated by a signal'}`;
  }
  switch (code) {
    case CHILD_EXIT.OK:
      return 'exit code 0: stopped cleanly';
    case CHILD_EXIT.STARTUP_FAILED:
      return `exit code ${code}: could not start (handler or store)`;
    case CHILD_EXIT.ORPHANED:
      return `exit code ${code}: its supervisor was gone`;
    case 1:
      return 'exit code 1: an uncaught error or process.exit(1)';
    case 134:
      return 'exit code 134: aborted';
    case 137:
      return 'exit code 137: killed';
    default:
      return `exit code ${String(code)}`;
  }
}

/** What the supervisor knows of a child that ended, beside its exit code or signal. */
export interface ChildEndFacts {
  killed?: { reason: string; detail: string } | undefined;
  retiring?: string | undefined;
  startupError?: string | undefined;
  /** What it said last: the error nobody caught, if it told us. */
  lastWords?: { uncaught: UncaughtError | undefined };
}

/**
 * How a child ended, in words, for its CHILD_EXITED line and its jobs'
 * error detail: killed by the supervisor (and why), could not start,
 * drained cleanly, or crashed (signal or code). A child we stop with SIGTERM
 * hands its jobs back and exits 0, so its code alone would read "stopped
 * cleanly": what we did to it comes first.
 */
export function describeChildEnd(
  child: ChildEndFacts,
  code: number | null,
  signal: NodeJS.Signals | null,
): { reason: string; text: string } {
  if (child.killed !== undefined) {
    const end =
      signal === 'SIGKILL'
        ? 'it did not let go in time (SIGKILL)'
        : code === CHILD_EXIT.OK
          ? 'it let go and exited'
          : `then ${describeExit(code, signal)}`;
    return {
      reason: child.killed.reason,
      text: `killed by the supervisor (${child.killed.reason}: ${child.killed.detail}); ${end}`,
    };
  }
  if (child.startupError !== undefined)
    return { reason: 'startup_failed', text: `could not start: ${child.startupError}` };
  if (code === CHILD_EXIT.OK && signal === null) {
    return child.retiring !== undefined
      ? { reason: 'drained', text: `drained cleanly (${child.retiring})` }
      : { reason: 'exited', text: 'exited with code 0 unasked (a handler called process.exit?)' };
  }
  if (code === CHILD_EXIT.ORPHANED) return { reason: 'orphaned', text: describeExit(code, signal) };
  const uncaught = child.lastWords?.uncaught;
  if (uncaught !== undefined && signal === null)
    return {
      reason: 'crashed',
      text: `crashed: ${uncaught.origin} (exit code ${String(code)}): ${uncaught.error.message}`,
    };
  return { reason: 'crashed', text: `crashed: ${describeExit(code, signal)}` };
}
