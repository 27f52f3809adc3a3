/**
 * Write turns on SQLite: one writer at a time, first come first served,
 * each waiting for its turn asynchronously instead of in SQLite's busy
 * handler, which stops the whole event loop. The supervisor keeps the
 * queue (supervisor/write-turns.ts); its children take turns over IPC
 * (child/write-turns.ts). Processes outside the queue (the CLI, the
 * dashboard, an application enqueuing) keep their busy timeout.
 */
export interface WriteTurns {
  /** Resolves when it is this process's turn to write. */
  take(): Promise<void>;
  /** The write is committed, rolled back, or could not begin: the next in line may write. */
  give(): void;
  /**
   * How long a write in its turn may still wait in SQLite's busy handler,
   * for a process outside the queue; past it, it gives its turn back and
   * tries again later (connection.ts, withBusyRetry).
   */
  readonly busyTimeoutMs: number;
}
