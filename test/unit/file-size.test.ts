/**
 * The house rule of at most 400 lines a file, for every TypeScript module of
 * the product, the bench and the tests. A file that grows past it does two
 * things, and is split where it does.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sources } from '../helpers/sources.js';

const MAX_LINES = 400;
const FOLDERS = ['src', 'supervisor', 'child', 'scripts', 'bench/src', 'bench/test', 'test'];

function linesOf(file: string): number {
  return readFileSync(path.join(ROOT, file), 'utf8').split('\n').length - 1;
}

describe('file size', () => {
  it(`every module has at most ${MAX_LINES} lines`, () => {
    const files = FOLDERS.flatMap(sources);
    expect(files.length).toBeGreaterThan(300);
    const long = files.map((file) => ({ file, lines: linesOf(file) })).filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
