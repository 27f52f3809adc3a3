import { execa, type ResultPromise } from 'execa';
import { fileURLToPath } from 'node:url';

const SUPERVISE = fileURLToPath(new URL('../../supervisor/main.js', import.meta.url));

export interface SupervisorExit {
  exitCode?: number;
  signal?: string;
}

/** A supervisor the chaos program started, and can kill. */
export class SupervisorRun {
  private readonly process: ResultPromise;
  private exitExpected = false;
  readonly pid: number;
  readonly exited: Promise<SupervisorExit>;
  /** Set when it exited without the chaos program asking it to. */
  unexpectedExit: SupervisorExit | undefined;
  running = true;

  constructor(configFile: string, outputFile: string) {
    this.process = execa(process.execPath, [SUPERVISE, '--config', configFile], {
      reject: false,
      stdin: 'ignore',
      stdout: { file: outputFile, append: true },
      stderr: { file: outputFile, append: true },
      // The chaos program decides when supervisors die; execa must not kill them behind its back
      // (at its exit, or 5 s after a SIGTERM: a drain may take longer).
      cleanup: false,
      forceKillAfterDelay: false,
    });
    if (this.process.pid === undefined) throw new Error('could not start a supervisor');
    this.pid = this.process.pid;
    this.exited = this.process.then((result) => {
      const exit = { exitCode: result.exitCode, signal: result.signal };
      this.running = false;
      if (!this.exitExpected) this.unexpectedExit = exit;
      return exit;
    });
  }

  kill(signal: NodeJS.Signals): void {
    this.exitExpected = true;
    this.process.kill(signal);
  }
}
