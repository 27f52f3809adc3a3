/**
 * Write turns on SQLite: a process of the queue never waits in SQLite's busy
 * handler, which stops its whole event loop. While writers do not meet, each
 * writes at once, with no busy timeout (a child) and no message; the first
 * that finds the lock taken opens a line, kept by the supervisor
 * (supervisor/write-turns.ts), and while it is open every write waits for its
 * turn asynchronously, first come first served (a child asks over IPC:
 * child/write-turns.ts). The line closes once nobody has waited in it for a
 * moment. Processes outside the queue (the CLI, the dashboard, an
 * application enqueuing) keep their busy timeout.
 */
export interface WriteTurns {
  /**
   * Wait, if need be, until this process may try its write: undefined means
   * at once (the line is closed). `afterBusy`: its last try found the lock
   * taken, so it waits in line.
   */
  take(afterBusy: boolean): Promise<void> | undefined;
  /**
   * The try is over (committed, rolled back, or could not begin). True when
   * a try that found the lock taken must wait before the next (it had its
   * turn, so the lock is held outside the line); false when the line is the
   * wait.
   */
  give(): boolean;
  /**
   * How long a try may still wait in SQLite's busy handler: 0 in a child;
   * the supervisor keeps a short one against processes outside the queue
   * (connection.ts, withBusyRetry).
   */
  readonly busyTimeoutMs: number;
}
