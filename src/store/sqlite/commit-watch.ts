import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { WakeWatch } from '../wake-watch.js';

const inMemory = (dbPath: string) => dbPath === ':memory:' || dbPath === '';

/** Watches the database's folder (the WAL file comes and goes) and calls `onWrite` on each write to the file or its WAL. */
function watchWrites(dbPath: string, onWrite: () => void, onError?: (error: Error) => void): FSWatcher {
  const files = new Set([basename(dbPath), `${basename(dbPath)}-wal`]);
  const watcher = watch(dirname(dbPath), { persistent: false }, (_event, filename) => {
    if (filename !== null && files.has(filename)) onWrite();
  });
  watcher.on('error', (error) => onError?.(error));
  return watcher;
}

/**
 * SQLite has no NOTIFY; its commits do show as writes to the WAL file. This
 * watch is for a reader that reads the data after each wake-up (a worker
 * about to claim, a reader of outcomes): at the first write it sees, it
 * stops watching and calls `onCommit`, until `rearm()`, which the reader
 * calls just before it reads. A commit before that is in what the reader
 * reads; one after wakes it again. A busy database writes thousands of
 * times a second, and watched all along each write is an event to handle,
 * in every process watching (its cost: docs/performance.md, section 19).
 */
export function watchNextCommit(dbPath: string, onCommit: () => void, onError?: (error: Error) => void): WakeWatch {
  if (inMemory(dbPath)) return { rearm: () => undefined, stop: async () => undefined };
  let watcher: FSWatcher | undefined;
  let stopped = false;
  const disarm = (armed: FSWatcher) => {
    if (watcher !== armed) return;
    armed.close();
    watcher = undefined;
  };
  const rearm = () => {
    if (stopped || watcher !== undefined) return;
    const armed: FSWatcher = watchWrites(
      dbPath,
      () => {
        disarm(armed);
        onCommit();
      },
      (error) => {
        disarm(armed);
        onError?.(error);
      },
    );
    watcher = armed;
  };
  rearm();
  return {
    rearm,
    stop: async () => {
      stopped = true;
      if (watcher !== undefined) disarm(watcher);
    },
  };
}
