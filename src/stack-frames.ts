/**
 * Leasehold's own frames in a handler's stack. Every error a handler makes
 * carries the same few frames below the handler's (the child's run loop,
 * the job run): a stack shows them once, and each `Caused by:` section
 * leaves them out with a count, as Java's `... 4 more` does.
 */
import { fileURLToPath } from 'node:url';

/** The folder above this file's (dist/ when built, the repo when run from source), and leasehold's folders in it. */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OWN_FOLDERS = ['src/', 'child/', 'supervisor/'].map((folder) => ROOT + folder);
const OWN_URLS = OWN_FOLDERS.map((folder) => new URL(`file://${folder}`).href);

const FRAME = /^\s+at /;

/** A stack line that is a frame in one of leasehold's own files. */
export function isOwnFrame(line: string): boolean {
  return FRAME.test(line) && [...OWN_FOLDERS, ...OWN_URLS].some((folder) => line.includes(folder));
}

/** Node's own frames, which sit among leasehold's below a handler (`processTicksAndRejections`). */
function isNodeFrame(line: string): boolean {
  return FRAME.test(line) && /\(node:|at node:/.test(line);
}

/** OpenTelemetry's context frames, among leasehold's when the attempt runs in its span (src/tracing). */
function isTracingFrame(line: string): boolean {
  return FRAME.test(line) && line.includes('/node_modules/@opentelemetry/api/');
}

/**
 * A cause's stack without the run of leasehold's (and node's) frames at its
 * bottom, the way into the handler that the first section already shows,
 * and a line saying how many were left out. Frames above the handler's
 * (a cause made inside leasehold) are kept.
 */
export function withoutOwnFrames(stack: string): string {
  const lines = stack.split('\n');
  let keep = lines.length;
  const below = (line: string) => isOwnFrame(line) || isNodeFrame(line) || isTracingFrame(line);
  while (keep > 0 && below(lines[keep - 1]!)) keep--;
  const dropped = lines.slice(keep);
  const own = dropped.filter(isOwnFrame).length;
  if (own === 0 || keep === 0 || !FRAME.test(lines[keep - 1]!)) return stack;
  const others = [
    [dropped.filter(isNodeFrame).length, "of node's"],
    [dropped.filter(isTracingFrame).length, "of OpenTelemetry's"],
  ] as const;
  const more = others.filter(([count]) => count > 0).map(([count, whose]) => ` and ${count} ${whose}`);
  const what = `${own} leasehold frame${own === 1 ? '' : 's'}${more.join('')}`;
  return [...lines.slice(0, keep), `    ... ${what}`].join('\n');
}
