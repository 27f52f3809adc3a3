/**
 * The supervisor started from code: what `supervise` runs, for an
 * application's own entry point, its dev server or its test setup
 * (`import { startSupervisor } from 'leasehold'`). It forks the
 * same isolated children, one pool per class, and leaves the process's
 * signals to its caller.
 */
import type { StartSupervisorOptions } from './launch.js';

export type { StartSupervisorOptions } from './launch.js';

/** A supervisor running in this process (startSupervisor). */
export interface RunningSupervisor {
  /** Its id in the `workers` table and in its log lines (`host:pid:random`). */
  readonly id: string;
  /** The config file it runs; for a config given as an object, `<working directory>/(config object)`. */
  readonly configFile: string;
  /** Resolves once every class's first children are ready (or have ended before they were). */
  readonly ready: Promise<void>;
  /** Read the config file again and apply it, or refuse it whole and keep the running one, as SIGHUP does. */
  reload(): Promise<void>;
  /**
   * Stop claiming, let running jobs finish within `shutdown_grace_seconds`,
   * hand back the rest, and close the database and the log, as SIGTERM
   * does. `{ force: true }` (or a second call with it) stops waiting for
   * running jobs, as a second signal does.
   */
  stop(options?: { force?: boolean }): Promise<void>;
}

/**
 * Check the config as `supervise --check-config` does (a ConfigError says
 * every problem), then start: the database opened (waited for while it is
 * away), SQLite's writer, the children, the sweeper and the other chores.
 */
export async function startSupervisor(options: StartSupervisorOptions): Promise<RunningSupervisor> {
  // Loaded here, not with the package: an application that only enqueues never loads the supervisor.
  const { launchSupervisor } = await import('./launch.js');
  const { supervisor, stop } = await launchSupervisor(options);
  return {
    id: supervisor.id,
    configFile: supervisor.configFile,
    ready: supervisor.childrenReady(),
    reload: () => supervisor.reload(),
    stop: (how) => {
      if (how?.force === true) supervisor.forceShutdown();
      return stop();
    },
  };
}
