import { pathToFileURL } from 'node:url';
import { LeaseholdError } from '../errors.js';
import { syntaxErrorLocation } from './syntax-location.js';

/**
 * Import a handler module and check that its default export is a function:
 * the one rule a child applies at start and the config check applies in its
 * short-lived probe process (handler-probe.ts).
 */
export async function importHandler(file: string): Promise<(...args: never[]) => unknown> {
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    throw new LeaseholdError('HANDLER:LOAD_FAILED', `cannot load handler ${file}: ${await whyNotLoaded(file, error)}`, {
      retryable: false,
      cause: error,
    });
  }
  if (typeof module.default !== 'function') {
    throw new LeaseholdError('HANDLER:NO_DEFAULT_EXPORT', `handler ${file} has no default export function`, {
      retryable: false,
    });
  }
  return module.default as (...args: never[]) => unknown;
}

/** The error's first line; for a syntax error, its name and where it is (`(at /srv/h.mjs:2:17)`). */
async function whyNotLoaded(file: string, error: unknown): Promise<string> {
  if (!(error instanceof SyntaxError)) return firstLine(error);
  const where = await syntaxErrorLocation(file, error);
  return `${error.name}: ${firstLine(error)}${where === undefined ? '' : ` (at ${where})`}`;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}
