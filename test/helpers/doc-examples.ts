/**
 * The TypeScript examples of a markdown page, as the files of one program.
 *
 * A ```ts block is a module of its own. Its first line, when it is a comment
 * that starts with a path ending in `.ts` (`// src/jobs.ts …`), says where it
 * lives, so that the page's other blocks can import it; otherwise it is
 * `example-<line>.ts`. What a block assumes without showing it comes from
 * HTML comments, which a reader of the rendered page does not see:
 *
 * - `<!-- ts-prelude … -->` right before a block: lines put before the
 *   block's own (an import, a `declare const queue: Queue`);
 * - `<!-- ts-file <path> … -->` anywhere: a file the page's blocks import.
 */
import path from 'node:path';

export interface DocExample {
  /** Where the file lives, relative to the page's own folder of examples. */
  file: string;
  text: string;
  /** The page's line of the file's first line, and how many lines were put before it (0 for a hidden file). */
  line: number;
  hiddenLines: number;
  hidden: boolean;
}

const PATH_COMMENT = /^\/\/ ([\w./-]+\.ts)\b/;

/** Every TypeScript example of a page, hidden files included, in the page's order. */
export function docExamples(markdown: string): DocExample[] {
  const lines = markdown.split('\n');
  const examples: DocExample[] = [];
  let prelude: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const comment = /^<!-- ts-(prelude|file)\s*(\S*)\s*$/.exec(line);
    if (comment) {
      const end = lines.indexOf('-->', i);
      if (end < 0) throw new Error(`line ${i + 1}: <!-- ts-${comment[1]} is never closed by a line -->`);
      const body = lines.slice(i + 1, end);
      if (comment[1] === 'prelude') prelude = body;
      else examples.push({ file: comment[2]!, text: body.join('\n'), line: i + 2, hiddenLines: 0, hidden: true });
      i = end;
      continue;
    }
    if (line !== '```ts') {
      if (line.trim() !== '') prelude = [];
      continue;
    }
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`line ${i + 1}: a \`\`\`ts block is never closed`);
    const body = lines.slice(i + 1, end);
    const named = PATH_COMMENT.exec(body[0] ?? '')?.[1];
    examples.push({
      file: named ?? `example-${i + 2}.ts`,
      text: [...prelude, ...body].join('\n'),
      line: i + 2,
      hiddenLines: prelude.length,
      hidden: false,
    });
    prelude = [];
    i = end;
  }
  const seen = new Set<string>();
  for (const { file } of examples) {
    if (path.isAbsolute(file) || file.split('/').includes('..'))
      throw new Error(`${file}: an example's path stays inside its page's folder`);
    if (seen.has(file)) throw new Error(`${file}: two examples of the page live at the same path`);
    seen.add(file);
  }
  return examples;
}
