/**
 * The two processes' modules (supervisor/, child/) are no public API, but
 * for a package entry (whose exports the API report keeps): a function or class one of them exports that no other module
 * imports is dead code (the tests count as users: a rule tested alone is
 * alive). Read from the sources as TypeScript parses them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT, sources } from '../helpers/sources.js';

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest);
}

/** For each module, the names other modules import from it ('*' for a namespace import or a re-export of all). */
function importedNames(files: string[]): Map<string, Set<string>> {
  const imported = new Map<string, Set<string>>();
  for (const file of files) {
    for (const node of parse(file).statements) {
      if (!(ts.isImportDeclaration(node) || ts.isExportDeclaration(node))) continue;
      const specifier = node.moduleSpecifier;
      if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue;
      const target = path
        .relative(ROOT, path.resolve(ROOT, path.dirname(file), specifier.text))
        .replace(/\.js$/, '.ts');
      const bindings = ts.isImportDeclaration(node) ? node.importClause?.namedBindings : node.exportClause;
      const names =
        bindings !== undefined && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings))
          ? bindings.elements.map((element) => (element.propertyName ?? element.name).text)
          : ['*'];
      const set = imported.get(target) ?? new Set<string>();
      for (const name of names) set.add(name);
      imported.set(target, set);
    }
  }
  return imported;
}

/** The functions and classes a module exports, by name. */
function exportedFunctions(file: string): string[] {
  return parse(file).statements.flatMap((node) => {
    if (!(ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node)) || node.name === undefined) return [];
    const exported = ts.getModifiers(node)?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
    return exported === true ? [node.name.text] : [];
  });
}

/** The sources of the package's entry points (package.json `exports`), as `src/testing.ts`. */
function packageEntries(): Set<string> {
  const { exports } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, { default: string }>;
  };
  return new Set(
    Object.values(exports).map((entry) => entry.default.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')),
  );
}

describe('dead code', () => {
  it('every function or class supervisor/ and child/ export is imported somewhere', () => {
    const entries = packageEntries();
    expect(entries).toContain('index.ts');
    const processes = ['supervisor', 'child'].flatMap(sources).filter((file) => !entries.has(file));
    const imported = importedNames(['index.ts', ...['src', 'supervisor', 'child', 'scripts', 'test'].flatMap(sources)]);
    expect(processes.flatMap(exportedFunctions).length).toBeGreaterThan(20);
    const dead = processes.flatMap((file) => {
      const names = imported.get(file) ?? new Set<string>();
      return names.has('*')
        ? []
        : exportedFunctions(file)
            .filter((name) => !names.has(name))
            .map((n) => `${file}: ${n}`);
    });
    expect(dead).toEqual([]);
  });
});
