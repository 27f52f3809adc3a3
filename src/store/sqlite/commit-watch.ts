import { watch } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * SQLite has no NOTIFY; its commits do show as writes to the WAL file. This
 * watches the database's folder (the WAL file comes and goes) and calls
 * `onCommit` on each write to it: a wake-up hint for idle workers, costing
 * nothing while the database is quiet.
 */
export function watchCommits(
  dbPath: string,
  onCommit: () => void,
  onError?: (error: Error) => void,
): () => Promise<void> {
  if (dbPath === ':memory:' || dbPath === '') return async () => undefined;
  const files = new Set([basename(dbPath), `${basename(dbPath)}-wal`]);
  const watcher = watch(dirname(dbPath), { persistent: false }, (_event, filename) => {
    if (filename !== null && files.has(filename)) onCommit();
  });
  watcher.on('error', (error) => onError?.(error));
  return async () => watcher.close();
}
