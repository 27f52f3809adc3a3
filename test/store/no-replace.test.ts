import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('SQL hygiene', () => {
  const files = ['src', 'supervisor', 'child'].flatMap((dir) => sourceFiles(join(ROOT, dir)));

  it('never uses REPLACE (it deletes the row, and with it the attempts and events)', () => {
    const offenders = files.filter((file) =>
      /\b(INSERT\s+OR\s+REPLACE|REPLACE\s+INTO)\b/i.test(readFileSync(file, 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('keeps SQL inside src/store', () => {
    const sqlShape = /`\s*(SELECT|UPDATE|INSERT|DELETE)\s[\s\S]*?\b(FROM|SET|INTO)\b/;
    const outside = files.filter(
      (file) => !file.includes(`${join('src', 'store')}`) && sqlShape.test(readFileSync(file, 'utf8')),
    );
    expect(outside).toEqual([]);
  });
});
