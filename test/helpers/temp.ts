import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** A temp folder removed after the file's tests; call at the top of a describe or file. */
export function tempDir(prefix = 'leasehold-'): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
}

export function dbPathIn(dir: string, name = 'queue.db'): string {
  return join(dir, name);
}
