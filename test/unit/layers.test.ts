/**
 * Imports point down. The library floor (src/ but for src/cli, src/dashboard and the IPC
 * protocol) imports no process and no command, and within it the leaves and the store
 * import nothing above them; the two processes never
 * import each other, and share only src/ipc/ (the messages, and the flight recorder's file); the commands import
 * no process. Read from the sources' own import lists, as TypeScript parses them.
 * No module imports itself round a circle: a circle is a leaf module missing.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT, sources } from '../helpers/sources.js';

/** The repo-relative targets of a file's relative imports (static and dynamic). */
function importsOf(file: string, text = readFileSync(path.join(ROOT, file), 'utf8')): string[] {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => path.relative(ROOT, path.resolve(ROOT, path.dirname(file), name)).replace(/\.js$/, '.ts'));
}

type Layer = 'library' | 'ipc' | 'dashboard' | 'cli' | 'supervisor' | 'child';

function layerOf(file: string): Layer | undefined {
  if (file.startsWith('src/cli/')) return 'cli';
  if (file.startsWith('src/ipc/')) return 'ipc';
  if (file.startsWith('src/dashboard/')) return 'dashboard';
  if (file.startsWith('src/')) return 'library';
  if (file.startsWith('supervisor/')) return 'supervisor';
  if (file.startsWith('child/')) return 'child';
  return undefined;
}

/** Which layers each layer may import. */
const ALLOWED: Record<Layer, readonly Layer[]> = {
  library: ['library'],
  ipc: ['library', 'ipc'],
  dashboard: ['library', 'dashboard'],
  cli: ['library', 'dashboard', 'cli'],
  supervisor: ['library', 'ipc', 'dashboard', 'supervisor'],
  child: ['library', 'ipc', 'child'],
};

/** The imports of a file that point where its layer may not look, as `from -> to`. */
function upwardImports(file: string, text?: string): string[] {
  const from = layerOf(file)!;
  return importsOf(file, text)
    .filter((target) => {
      const to = layerOf(target);
      return to !== undefined && !ALLOWED[from].includes(to);
    })
    .map((target) => `${file} -> ${target}`);
}

/** The library's entry points: above every floor. */
const ENTRY_POINTS = new Set(['src/index.ts', 'src/testing.ts']);

/**
 * The library's floors, low to high: the leaves (src/*.ts: errors, clock,
 * limits, the backoff policy, the job-type registry...), then the store
 * and tracing, then the rest (config, queue, reports, the entry points).
 * A module imports its own floor and those below.
 */
function floorOf(file: string): number | undefined {
  if (layerOf(file) !== 'library') return undefined;
  if (ENTRY_POINTS.has(file)) return 2;
  const inSrc = file.slice('src/'.length);
  if (!inSrc.includes('/')) return 0;
  return ['store', 'tracing'].includes(inSrc.split('/')[0]!) ? 1 : 2;
}

/** The imports of a library module that point to a higher floor, as `from -> to`. */
function higherFloorImports(file: string, text?: string): string[] {
  const from = floorOf(file);
  if (from === undefined) return [];
  return importsOf(file, text)
    .filter((target) => (floorOf(target) ?? -1) > from)
    .map((target) => `${file} -> ${target}`);
}

/** The folders whose modules must form no import circle, type-only imports included. */
const CYCLE_FREE_FOLDERS = ['src', 'supervisor', 'child', 'scripts', 'bench/src'];

/** The import circles a depth-first walk of `files` meets (none if there is none), each as the path that closes it. */
function importCycles(
  files: string[],
  importsOfFile: (file: string) => string[] = (file) => importsOf(file),
): string[][] {
  const inScope = new Set(files);
  const graph = new Map(files.map((file) => [file, importsOfFile(file).filter((target) => inScope.has(target))]));
  const cycles: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string): void => {
    const at = path.indexOf(file);
    if (at >= 0) {
      cycles.push([...path.slice(at), file]);
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const target of graph.get(file) ?? []) visit(target);
    path.pop();
    done.add(file);
  };
  for (const file of files) visit(file);
  return cycles;
}

describe('layers', () => {
  const files = ['src', 'supervisor', 'child'].flatMap(sources);

  it('reads the imports of every module', () => {
    // The check below would pass on no files at all.
    expect(files.length).toBeGreaterThan(50);
    expect(importsOf('supervisor/main.ts')).toContain('supervisor/launch.ts');
  });

  it('has no import that points up or across', () => {
    expect(files.flatMap((file) => upwardImports(file))).toEqual([]);
  });

  it('catches one that does', () => {
    expect(upwardImports('src/queue/queue.ts', "import { Supervisor } from '../../supervisor/supervisor.js';")).toEqual(
      ['src/queue/queue.ts -> supervisor/supervisor.ts'],
    );
    expect(upwardImports('src/store/open.ts', "const m = await import('../cli/context.js');")).toHaveLength(1);
    expect(upwardImports('child/main.ts', "import { x } from '../supervisor/pids.js';")).toHaveLength(1);
    expect(upwardImports('supervisor/main.ts', "import type { X } from '../child/handler.js';")).toHaveLength(1);
    expect(upwardImports('src/cli/leasehold.ts', "export { y } from '../../supervisor/sweeper.js';")).toHaveLength(1);
    expect(upwardImports('child/main.ts', "import { CHILD_EXIT } from '../src/ipc/protocol.js';")).toEqual([]);
    expect(upwardImports('src/dashboard/data.ts', "import { x } from '../cli/context.js';")).toHaveLength(1);
    expect(upwardImports('src/store/open.ts', "import { x } from '../dashboard/data.js';")).toHaveLength(1);
  });

  it("has no library module that imports a higher floor: the leaves, the store's", () => {
    expect(files.flatMap((file) => higherFloorImports(file))).toEqual([]);
  });

  it('catches one that does', () => {
    expect(higherFloorImports('src/backoff.ts', "import type { ClassConfig } from './config/schema.js';")).toEqual([
      'src/backoff.ts -> src/config/schema.ts',
    ]);
    expect(
      higherFloorImports('src/store/postgres/connection.ts', "import { x } from '../../queue/enqueue.js';"),
    ).toEqual(['src/store/postgres/connection.ts -> src/queue/enqueue.ts']);
    expect(higherFloorImports('src/handler.ts', "import type { J } from './index.js';")).toHaveLength(1);
    expect(higherFloorImports('src/store/open.ts', "import { x } from '../limits.js';")).toEqual([]);
    expect(higherFloorImports('src/queue/queue.ts', "import { x } from '../store/open.js';")).toEqual([]);
  });
});

describe('import circles', () => {
  it('has none', () => {
    const files = CYCLE_FREE_FOLDERS.flatMap(sources);
    expect(files.length).toBeGreaterThan(50);
    expect(importCycles(files)).toEqual([]);
  });

  it('finds one, type-only imports included', () => {
    const imports: Record<string, string[]> = {
      'scripts/a.ts': ["import { b } from './b.js';"],
      'scripts/b.ts': ["import type { C } from './c.js';"],
      'scripts/c.ts': ["export { a } from './a.js';"],
      'scripts/leaf.ts': [],
    };
    const of = (file: string) => importsOf(file, imports[file]!.join('\n'));
    expect(importCycles(Object.keys(imports), of)).toEqual([
      ['scripts/a.ts', 'scripts/b.ts', 'scripts/c.ts', 'scripts/a.ts'],
    ]);
    imports['scripts/c.ts'] = ["import { x } from './leaf.js';"];
    expect(importCycles(Object.keys(imports), of)).toEqual([]);
  });
});
