/**
 * A comment that cites a guarantee cites one docs/guarantees.md numbers, by
 * its number and its name as the page's heading spells it: `guarantee N (Name)`,
 * the name in parentheses right after the number (it may wrap across comment
 * lines, `//` ones included). A comment that cites a "Decision N" is
 * reported too: no numbered list of decisions exists to look it up in, so
 * such a comment gives its reason instead.
 *
 * Comments are read with TypeScript's parser (so a string or a template that
 * holds `//` is not taken for one) in every source file under src/,
 * supervisor/, child/, scripts/ and test/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const FOLDERS = ['src', 'supervisor', 'child', 'scripts', 'test'];
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;

/** The numbered headings of docs/guarantees.md: `## 4. Nothing stays RUNNING` → 4 → 'Nothing stays RUNNING'. */
function numberedGuarantees(markdown: string): Map<number, string> {
  const names = new Map<number, string>();
  for (const [, number, name] of markdown.matchAll(/^## (\d+)\. (.+?)\s*$/gm))
    names.set(Number(number), (name ?? '').trim());
  return names;
}

/** Every comment in a source text, with its first line, its markers and line breaks taken out. */
function commentsOf(text: string, fileName: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, scriptKind(fileName));
  const ranges = new Map<number, ts.CommentRange>();
  const collect = (found: ts.CommentRange[] | undefined) => {
    for (const range of found ?? []) ranges.set(range.pos, range);
  };
  const visit = (node: ts.Node) => {
    collect(ts.getLeadingCommentRanges(text, node.getFullStart()));
    collect(ts.getTrailingCommentRanges(text, node.getEnd()));
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  // A run of `//` comments on consecutive lines is one comment, so a citation may wrap as in a block comment.
  const comments: { line: number; text: string; end: number; single: boolean }[] = [];
  for (const range of [...ranges.values()].sort((a, b) => a.pos - b.pos)) {
    const raw = text.slice(range.pos, range.end);
    const single = range.kind === ts.SyntaxKind.SingleLineCommentTrivia;
    const body = single ? raw.replace(/^\/\/+/, '') : raw.replace(/^\/\*+|\*+\/$/g, '').replace(/^\s*\*+/gm, '');
    const previous = comments.at(-1);
    if (previous?.single && single && /^[ \t]*\r?\n[ \t]*$/.test(text.slice(previous.end, range.pos))) {
      previous.text += ` ${body}`;
      previous.end = range.end;
    } else {
      const line = source.getLineAndCharacterOfPosition(range.pos).line + 1;
      comments.push({ line, text: body, end: range.end, single });
    }
  }
  return comments.map(({ line, text }) => ({ line, text: text.replace(/\s+/g, ' ').trim() }));
}

function scriptKind(fileName: string): ts.ScriptKind {
  return /\.[mc]?ts$/.test(fileName) ? ts.ScriptKind.TS : ts.ScriptKind.JS;
}

/**
 * What is wrong with the citations in one source text. One comment may cite
 * several (`guarantees N (Name) and M (Name)`): each number needs its name.
 */
function citationProblems(text: string, fileName: string, names: ReadonlyMap<number, string>): string[] {
  const problems: string[] = [];
  // Parsing is the slow part: a file that names neither word has nothing to check.
  if (!/guarantee|decision/i.test(text)) return problems;
  for (const comment of commentsOf(text, fileName)) {
    const where = `${fileName}:${comment.line}`;
    for (const match of comment.text.matchAll(
      /\bguarantees?\s+\d+(?:\s*\([^()]*\))?(?:\s*(?:,|and|or)\s*\d+(?:\s*\([^()]*\))?)*/gi,
    )) {
      for (const [, digits, cited] of match[0].matchAll(/(\d+)(?:\s*\(([^()]*)\))?/g)) {
        const number = Number(digits);
        const name = names.get(number);
        if (name === undefined)
          problems.push(`${where}: cites guarantee ${number}, which docs/guarantees.md does not number`);
        else if (cited?.trim() !== name)
          problems.push(
            `${where}: cites guarantee ${number} ${cited === undefined ? 'without its name' : `as "${cited.trim()}"`}: write "guarantee ${number} (${name})"`,
          );
      }
    }
    for (const match of comment.text.matchAll(/\bdecision\s+\d+\b/gi))
      problems.push(`${where}: cites "${match[0]}", which no numbered list defines: give the reason instead`);
  }
  return problems;
}

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && SOURCE.test(entry.name) && !entry.parentPath.includes('node_modules'))
    .filter((entry) => !entry.parentPath.includes(path.join('static', 'vendor')))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

const PAGE = readFileSync(path.join(ROOT, 'docs/guarantees.md'), 'utf8');
const NAMES = numberedGuarantees(PAGE);

describe('guarantee citations', () => {
  it('docs/guarantees.md numbers its guarantees from 1 in order, a gap only for one it says is not kept yet', () => {
    const numbers = [...NAMES.keys()];
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    const notYet = PAGE.split('## Not listed yet')[1] ?? '';
    const gaps = Array.from({ length: Math.max(...numbers) }, (_, index) => index + 1).filter((n) => !NAMES.has(n));
    for (const gap of gaps) expect(notYet, `guarantee ${gap} is missing`).toMatch(new RegExp(`guarantee ${gap}\\b`));
  });

  it('every comment cites a guarantee the page numbers, by its name there', () => {
    const files = FOLDERS.flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(100);
    const problems = files.flatMap((file) =>
      citationProblems(readFileSync(path.join(ROOT, file), 'utf8'), file, NAMES),
    );
    expect(problems).toEqual([]);
  });

  it('reports a citation of a number the page does not have', () => {
    expect(NAMES.has(13)).toBe(false);
    expect(citationProblems('// as guarantee 13 (Made up) says', 'fixture.ts', NAMES)).toEqual([
      'fixture.ts:1: cites guarantee 13, which docs/guarantees.md does not number',
    ]);
  });

  it('reports a missing or wrong name and a "Decision N", in comments only', () => {
    const names = new Map([
      [1, 'Nothing stays RUNNING'],
      [2, 'Faults are weather, not death'],
    ]);
    const fixture = [
      '// the queue keeps guarantee 3 (Made up) here',
      '/** the backstop of guarantee 1 */',
      '/*',
      ' * guarantees 1 (Nothing stays RUNNING) and 2 (faults are weather,',
      ' * not death)',
      ' */',
      'const why = 1; // see decision 3',
      'const text = `guarantee 9 // in a template, not a comment`;',
      "const url = 'postgres://host/db'; // guarantee 2 (Faults are",
      '// weather, not death) wrapped onto the next // comment',
    ].join('\n');
    expect(citationProblems(fixture, 'fixture.ts', names)).toEqual([
      'fixture.ts:1: cites guarantee 3, which docs/guarantees.md does not number',
      'fixture.ts:2: cites guarantee 1 without its name: write "guarantee 1 (Nothing stays RUNNING)"',
      'fixture.ts:3: cites guarantee 2 as "faults are weather, not death": write "guarantee 2 (Faults are weather, not death)"',
      'fixture.ts:7: cites "decision 3", which no numbered list defines: give the reason instead',
    ]);
  });
});
