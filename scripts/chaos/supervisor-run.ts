import { execa, type ResultPromise } from 'execa';
import { fileURLToPath } from 'node:url';

const SUPERVISE = fileURLToPath(new URL('../../supervisor/main.js', import.meta.url));

/** A supervisor the chaos program started, and can kill. */
export class SupervisorRun {
  private readonly process: ResultPromise;
  readonly pid: number;
  readonly exited: Promise<{ exitCode?: number; signal?: string }>;

  constructor(configFile: string, outputFile: string) {
    this.process = execa(process.execPath, [SUPERVISE, '--config', configFile], {
      reject: false,
      stdin: 'ignore',
      stdout: { file: outputFile, append: true },
      stderr: { file: outputFile, append: true },
      // The chaos program decides when supervisors die; execa must not kill them behind its back.
      cleanup: false,
    });
    if (this.process.pid === undefined) throw new Error('could not start a supervisor');
    this.pid = this.process.pid;
    this.exited = this.process.then((result) => ({ exitCode: result.exitCode, signal: result.signal }));
  }

  kill(signal: NodeJS.Signals): void {
    this.process.kill(signal);
  }
}
