import { CHILD_EXIT } from '../src/ipc/protocol.js';

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
