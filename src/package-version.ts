/**
 * leasehold's version, read at run time from its own package.json: the
 * nearest one above this module (dist/src/ when built, src/ under a test).
 * yargs' own guess reads the package.json above the node_modules that holds
 * yargs, which in an app that installed leasehold is the app's.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageVersion(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
  }
}
