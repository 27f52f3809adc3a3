/**
 * The folder decides a test's tier (vitest.config.ts): a test file in a folder that no tier names would never
 * run, and one in two tiers would run twice.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TIERS } from '../../vitest.config.js';

const TEST_ROOT = path.resolve(import.meta.dirname, '..');

function testFiles(): string[] {
  return readdirSync(TEST_ROOT, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => path.relative(TEST_ROOT, path.join(entry.parentPath, entry.name)));
}

/** The tiers whose folders hold `file` (a path under test/). */
function tiersOf(file: string): string[] {
  const folder = file.split(path.sep)[0];
  return Object.entries(TIERS)
    .filter(([, folders]) => (folders as readonly string[]).includes(folder!))
    .map(([tier]) => tier);
}

describe('test tiers', () => {
  it('puts every test file in exactly one tier', () => {
    const files = testFiles();
    expect(files.length).toBeGreaterThan(80);
    expect(files.filter((file) => tiersOf(file).length !== 1)).toEqual([]);
  });

  it('finds a file outside every tier', () => {
    expect(tiersOf('x.test.ts')).toEqual([]);
    expect(tiersOf(path.join('elsewhere', 'x.test.ts'))).toEqual([]);
    expect(tiersOf(path.join('cli', 'x.test.ts'))).toEqual(['process']);
    expect(tiersOf(path.join('exclusive', 'x.test.ts'))).toEqual(['exclusive']);
  });
});
