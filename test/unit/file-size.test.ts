/**
 * The house rule of at most 400 lines a file, held where it holds today: the
 * child's modules (child/). A file that grows past it does two things, and
 * is split where it does.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sources } from '../helpers/sources.js';

const MAX_LINES = 400;

describe('file size', () => {
  it(`every module of child/ has at most ${MAX_LINES} lines`, () => {
    const files = sources('child');
    expect(files.length).toBeGreaterThan(5);
    const long = files
      .map((file) => ({ file, lines: readFileSync(path.join(ROOT, file), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
