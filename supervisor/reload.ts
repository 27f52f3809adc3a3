/**
 * A reload's verdicts. Reading the file again is checked exactly as start-up
 * checks it (deploymentProblems: a handler is loaded in a probe process) so
 * that a typo never reaches a child. Each verdict is logged and recorded in
 * this supervisor's local record, where `leasehold reload` waits for it.
 */
import { configChanges } from '../src/config/changes.js';
import { deploymentProblems } from '../src/config/deployment.js';
import { readConfig } from '../src/config/load.js';
import type { LeaseholdConfig } from '../src/config/schema.js';
import {
  removeLocalSupervisor,
  writeLocalSupervisor,
  type LocalSupervisor,
  type ReloadEvent,
} from '../src/local-supervisors.js';
import type { Logger } from '../src/log.js';

/** A class whose new config cannot start a child: it stays on the config its children run. */
export interface ClassFailure {
  class: string;
  handler: string;
  error: string;
}

export type ReloadPlan =
  { next: LeaseholdConfig; changes: string[] } | { rejected: string[] } | { failed: ClassFailure[] };

/** The config file read again (an object config: checked again) and checked against the running one: what to apply, or why not. */
export async function planReload(running: LeaseholdConfig): Promise<ReloadPlan> {
  let next: LeaseholdConfig;
  try {
    next = readConfig(running.source ?? running.file);
  } catch (error) {
    return { rejected: [(error as Error).message] };
  }
  const { changes, refused } = configChanges(running, next);
  if (refused.length > 0) return { rejected: refused };
  const problems = await deploymentProblems(next);
  const others = problems.filter((problem) => problem.handler === undefined);
  if (others.length > 0) return { rejected: others.map((problem) => `${problem.field}: ${problem.message}`) };
  if (problems.length > 0)
    return {
      failed: problems.flatMap(({ handler }) =>
        handler === undefined ? [] : [{ class: handler.class, handler: handler.file, error: handler.problem }],
      ),
    };
  return { next, changes };
}

/** Logs each reload's verdict and records it where `leasehold reload` reads it. */
export class ReloadVerdicts {
  private seq = 0;

  constructor(
    private readonly logger: Logger,
    private readonly record: Omit<LocalSupervisor, 'lastReload'>,
  ) {}

  /** The supervisor runs: its record appears. */
  started(): void {
    this.write(null);
  }

  /** The supervisor is gone: so is its record. */
  stopped(): void {
    removeLocalSupervisor(this.record.pid);
  }

  rejected(reasons: readonly string[]): void {
    const msg = `config reload rejected, the running config stays: ${reasons.join('; ')}`;
    this.logger.error(msg, { event: 'CONFIG_RELOAD_REJECTED', file: this.record.configFile, reasons });
    this.recordVerdict('CONFIG_RELOAD_REJECTED', msg);
  }

  /** `applied`: the changes of the reload that did take effect (none when it was refused before any). */
  failed(failures: readonly ClassFailure[], applied: readonly string[] = []): void {
    const lines = failures.map((failure) => {
      const msg = `config reload failed: class ${failure.class} cannot start a child on its new config (${failure.error}); its children keep serving on the running config`;
      this.logger.error(msg, {
        event: 'CONFIG_RELOAD_FAILED',
        file: this.record.configFile,
        class: failure.class,
        handler: failure.handler,
        error: failure.error,
        applied,
      });
      return msg;
    });
    const rest = applied.length === 0 ? '' : `; applied: ${applied.join('; ')}`;
    this.recordVerdict('CONFIG_RELOAD_FAILED', `${lines.join('; ')}${rest}`);
  }

  reloaded(changes: readonly string[]): void {
    const msg = `config reloaded: ${changes.length === 0 ? 'nothing changed' : changes.join('; ')}`;
    this.logger.info(msg, { event: 'CONFIG_RELOADED', file: this.record.configFile, changes });
    this.recordVerdict('CONFIG_RELOADED', msg);
  }

  private recordVerdict(event: ReloadEvent, message: string): void {
    this.seq += 1;
    this.write({ seq: this.seq, event, message, at: Date.now() });
  }

  /** A record that cannot be written costs `leasehold reload` its answer, never the supervisor its work. */
  private write(lastReload: LocalSupervisor['lastReload']): void {
    try {
      writeLocalSupervisor({ ...this.record, lastReload });
    } catch (error) {
      this.logger.warn(`could not write this supervisor's record for leasehold reload: ${(error as Error).message}`, {
        event: 'LOCAL_RECORD_FAILED',
      });
    }
  }
}
