import { setTimeout as sleep } from 'node:timers/promises';
import { isPostgresUrl } from '../../src/store/database-url.js';
import type { FaultInjector } from './fault-injector.js';
import { BackendKills, queueApplicationName, withApplicationName } from './postgres-faults.js';
import type { SeededRandom } from '../random.js';
import { LockOuts } from './sqlite-lockouts.js';

/**
 * `--db-faults`: database faults at random moments during the damage phase.
 * PostgreSQL: the queue's backends are terminated; SQLite: another process
 * holds the write lock past the busy timeout. The chaos program's own writes
 * (enqueues) go through `unlessFaulty`, so that they never wait on a
 * lock-out it made itself.
 */
export class DbFaults {
  private readonly stopping = new AbortController();
  private readonly loop: Promise<void>;
  private tail: Promise<unknown> = Promise.resolve();
  /** A fault is due or in progress (a lock-out waiting for the lock, or held). */
  private faulty = false;
  private stopped: Promise<void> | undefined;
  /** Faults that could not be injected (reported, never thrown: the run goes on). */
  private failures = 0;

  private constructor(
    private readonly injector: FaultInjector,
    private readonly random: SeededRandom,
    private readonly gapMs: { min: number; max: number },
  ) {
    this.loop = this.run();
  }

  static async start(database: string, random: SeededRandom): Promise<DbFaults> {
    if (isPostgresUrl(database))
      return new DbFaults(await BackendKills.open(database), random, { min: 1_000, max: 3_000 });
    return new DbFaults(new LockOuts(database), random, { min: 1_000, max: 4_000 });
  }

  /**
   * Run `work` now unless a fault is in progress (then false, and the caller
   * tries again later: the damage goes on meanwhile); no fault starts until
   * it is done.
   */
  async unlessFaulty(work: () => Promise<void>): Promise<boolean> {
    if (this.faulty) return false;
    const run = this.tail.then(work);
    this.tail = run.catch(() => undefined);
    await run;
    return true;
  }

  /** Stop injecting (a fault in progress ends now) and close the injector; safe twice. */
  stop(): Promise<void> {
    this.stopping.abort();
    this.injector.interrupt();
    this.stopped ??= this.loop.then(() => this.injector.close());
    return this.stopped;
  }

  report(): Record<string, number> {
    return { ...this.injector.report(), injection_failures: this.failures };
  }

  private async run(): Promise<void> {
    const { signal } = this.stopping;
    while (!signal.aborted) {
      try {
        await sleep(this.random.int(this.gapMs.min, this.gapMs.max), undefined, { signal });
      } catch {
        return; // stopped
      }
      // Due from now on: a write of ours asked for after this point waits for the next quiet moment, not behind the fault.
      this.faulty = true;
      const injection = this.tail.then(async () => {
        try {
          if (!signal.aborted) await this.injector.inject();
        } finally {
          this.faulty = false;
        }
      });
      this.tail = injection.catch(() => undefined);
      await injection.catch((error: unknown) => {
        this.failures += 1;
        console.error(`chaos: a database fault could not be injected: ${String(error)}`);
      });
    }
  }
}

/**
 * The database the chaos program itself uses. Under --db-faults on
 * PostgreSQL its sessions carry an application_name of their own, so that
 * the backend kills (aimed at the queue's application_name) spare them.
 */
export function observerDatabase(database: string): string {
  return isPostgresUrl(database)
    ? withApplicationName(database, `${queueApplicationName(database)}-observer`)
    : database;
}
