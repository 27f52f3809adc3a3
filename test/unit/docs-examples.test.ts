/**
 * Every TypeScript example in the docs compiles against the built package, as
 * an application would import it (`leasehold`, `leasehold/testing`, through
 * package.json's exports into dist/). Each page is one program: its examples
 * share the page's declarations (a `Jobs` registry), and no other page's.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { docExamples, type DocExample } from '../helpers/doc-examples.js';
import { ROOT } from '../helpers/sources.js';

const PAGES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => path.join('docs', file)),
]
  .filter((page) => docExamples(readFileSync(path.join(ROOT, page), 'utf8')).some((example) => !example.hidden))
  .sort();

const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: ['node'],
};

let previous: ts.Program | undefined;

/** The page's examples compiled together: each error as `page:line: message`. */
function compile(page: string): string[] {
  // Inside the repo, so that an example's imports resolve from its node_modules, and `leasehold` by its own name.
  const folder = path.join(ROOT, '.doc-examples', page.replace(/\.md$/, ''));
  const examples = new Map<string, DocExample>(
    docExamples(readFileSync(path.join(ROOT, page), 'utf8')).map((example) => [
      path.join(folder, example.file),
      example,
    ]),
  );
  const host = ts.createCompilerHost(OPTIONS);
  const { fileExists, directoryExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => examples.has(file) || fileExists.call(host, file);
  host.directoryExists = (dir) =>
    [...examples.keys()].some((file) => file.startsWith(`${dir}/`)) || directoryExists!.call(host, dir);
  host.readFile = (file) => examples.get(file)?.text ?? readFile.call(host, file);
  host.getSourceFile = (file, language, ...rest) => {
    const example = examples.get(file);
    return example
      ? ts.createSourceFile(file, example.text, language)
      : getSourceFile.call(host, file, language, ...rest);
  };
  // The program before shares the files it parsed that did not change: lib and package types parse once.
  const program = ts.createProgram({ rootNames: [...examples.keys()], options: OPTIONS, host, oldProgram: previous });
  previous = program;
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    const example = diagnostic.file && examples.get(diagnostic.file.fileName);
    if (!diagnostic.file || diagnostic.start === undefined) return message;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    if (!example) return `${diagnostic.file.fileName}:${line + 1}: ${message}`;
    const where =
      line < example.hiddenLines
        ? `${page}:${example.line - 1} (its ts-prelude)`
        : `${page}:${example.line + line - example.hiddenLines}`;
    return `${where}: ${message}`;
  });
}

describe('the docs’ TypeScript examples', () => {
  it('are found on the pages that show code, and the package they import is built', () => {
    expect(PAGES).toContain('docs/guides/typed-jobs.md');
    expect(existsSync(path.join(ROOT, 'dist/src/index.d.ts')), 'dist/ is missing: npm run build').toBe(true);
  });

  it.each(PAGES)('%s compiles against the built package', (page) => {
    expect(compile(page)).toEqual([]);
  });
});
