/**
 * Where a handler's syntax error is. Node names the file, line and column
 * only when it prints an uncaught error (a header `file:line`, the source
 * line, a caret); the SyntaxError an ESM import rejects with says only
 * `Unexpected token ';'`. So: a CommonJS module's error carries that header
 * in its stack already; for a module graph that did not parse, a node of its
 * own imports the module again and lets the error go uncaught. A graph that
 * did not parse ran none of its code, so importing it again runs none either.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Longer than any parse (the import stops at the first module that does not parse), within the probe's own time. */
const LOCATE_TIMEOUT_MS = 5_000;

/** `file:line:column` from node's header of an uncaught error (`file:line`, source, caret line), if it has one. */
export function headerLocation(text: string): string | undefined {
  const [head, , caret] = text.split('\n');
  const match = /^(.+):(\d+)$/.exec(head ?? '');
  if (match === null) return undefined;
  const [, where, line] = match as unknown as [string, string, string];
  const file = where.startsWith('file:') ? fileURLToPath(where) : where;
  const column = caret !== undefined && /^\s*\^+\s*$/.test(caret) ? caret.indexOf('^') + 1 : 0;
  return column > 0 ? `${file}:${line}:${column}` : `${file}:${line}`;
}

const FRAME = /^\s+at (?:.* \()?(.+?)\)?$/;
const isNodeFrame = (location: string) => location.startsWith('node:') || location === '<anonymous>';

/** The location of the first frame outside node (`/srv/h.mjs:3:5`), if the stack has one. */
export function firstOwnFrame(stack: string): string | undefined {
  for (const line of stack.split('\n')) {
    const location = FRAME.exec(line)?.[1];
    if (location === undefined || isNodeFrame(location)) continue;
    return location.startsWith('file:') ? location.replace(/^file:\/\/[^:]+/, (url) => fileURLToPath(url)) : location;
  }
  return undefined;
}

/**
 * Where the syntax error that stopped `file` from loading is (`file:line:column`), when node can say: a
 * module's code that threw one (JSON.parse at its top level) names it in its stack.
 */
export async function syntaxErrorLocation(file: string, error: SyntaxError): Promise<string | undefined> {
  const stack = error.stack ?? '';
  const where = headerLocation(stack) ?? firstOwnFrame(stack);
  if (where !== undefined) return where;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', 'await import(process.argv[1])', pathToFileURL(file).href],
      { timeout: LOCATE_TIMEOUT_MS, killSignal: 'SIGKILL' },
      (_error, _stdout, stderr) => resolve(headerLocation(stderr)),
    );
  });
}
