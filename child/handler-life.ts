import type { LogLevel } from '../src/limits.js';
import { coerceError, LeaseholdError } from '../src/errors.js';
import { handlerLog, type HandlerSetup, type HandlerTeardown } from '../src/handler.js';

type Log = (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;

/**
 * What a handler module keeps for its child's life: what its `setup`
 * opened before the first job (every job's ctx.resources), and its
 * `teardown`, run once on drain after the last job.
 */
export class HandlerLife {
  private constructor(
    readonly resources: unknown,
    private readonly teardown: HandlerTeardown | undefined,
  ) {}

  /**
   * Run `setup`. Its failure fails the child's start, but restartably: a
   * database not reachable yet may be reachable on the next try, so the
   * class's restart rules apply, not the give-up of a handler that cannot load.
   */
  static async start(
    exports: { setup?: HandlerSetup; teardown?: HandlerTeardown },
    className: string,
    log: Log,
  ): Promise<HandlerLife> {
    if (exports.setup === undefined) return new HandlerLife(undefined, exports.teardown);
    try {
      const resources = await exports.setup({
        class: className,
        log: handlerLog((level, msg, fields) => log(level, msg, { ...fields })),
      });
      return new HandlerLife(resources, exports.teardown);
    } catch (error) {
      throw new LeaseholdError('HANDLER:SETUP_FAILED', `setup failed: ${coerceError(error).message}`, {
        retryable: true,
        cause: error,
      });
    }
  }

  /** Run `teardown` with the resources, for at most `deadlineMs`: one that hangs is left behind, and the log says so. */
  async end(deadlineMs: number, log: Log): Promise<void> {
    const { teardown } = this;
    if (teardown === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), deadlineMs)));
    try {
      const ended = await Promise.race([
        Promise.resolve(teardown(this.resources)).then(() => 'done' as const),
        timedOut,
      ]);
      if (ended === 'timeout')
        log(
          'warn',
          `teardown did not finish within ${deadlineMs} ms (inside shutdown_grace_seconds): exiting without it`,
          {
            event: 'TEARDOWN_TIMEOUT',
            deadline_ms: deadlineMs,
          },
        );
    } catch (error) {
      log('error', `teardown failed: ${coerceError(error).message}`, {
        event: 'TEARDOWN_FAILED',
        err: coerceError(error),
      });
    } finally {
      clearTimeout(timer);
    }
  }
}
