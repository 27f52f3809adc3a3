/**
 * The types a user sees: each fixture folder is compiled by its own tsc, as
 * an application importing `leasehold` and `leasehold/testing` (the
 * package's self-reference, so through its `exports` and the built `.d.ts`
 * in dist/). One declares the Jobs registry: its `@ts-expect-error` lines
 * must each be an error (an unused one fails tsc), its other lines must
 * compile. The other declares nothing: today's untyped use compiles.
 */
import { execa } from 'execa';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/sources.js';

const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

async function compile(fixture: string): Promise<string[]> {
  const project = path.join(ROOT, 'test/fixtures/types', fixture, 'tsconfig.json');
  const run = await execa('node', [TSC, '-p', project, '--listFiles'], { reject: false, cwd: ROOT, timeout: 30_000 });
  expect(run.exitCode, `tsc -p ${project}:\n${run.stdout}\n${run.stderr}`).toBe(0);
  return run.stdout.split('\n').map((file) => path.relative(ROOT, file));
}

describe('typed jobs, as an application compiles them', () => {
  it('with Jobs declared: wrong classes, payloads and results are errors, and the right ones compile', async () => {
    const files = await compile('typed');
    expect(files).toContain('dist/src/index.d.ts');
    expect(files).toContain('dist/src/testing.d.ts');
  });

  it('with nothing declared: the untyped use compiles as before', async () => {
    const files = await compile('untyped');
    expect(files).toContain('dist/src/index.d.ts');
  });
});
