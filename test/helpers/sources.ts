/** The repo's own TypeScript sources, for the tests that read its structure (layers, dead code, file size). */
import { readdirSync } from 'node:fs';
import path from 'node:path';

/** The repo's root folder. */
export const ROOT = path.resolve(import.meta.dirname, '../..');

/** Every .ts file under a folder of the repo, as repo-relative paths. */
export function sources(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}
