/** Wake-ups of a reader: of a worker looking for jobs (WorkerStore.subscribe), of a reader of outcomes (outcomesSubscribe). */
export interface WakeWatch {
  /**
   * Watch again, if a wake-up ended the watch (SQLite: a watch wakes once, then
   * waits for this; PostgreSQL: it listens all along). Call it just before
   * reading: what commits before is in the read, what commits after wakes
   * again.
   */
  rearm(): void;
  /** Stops listening; safe twice. */
  stop(): Promise<void>;
}
