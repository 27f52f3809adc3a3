import { pathToFileURL } from 'node:url';
import { LeaseholdError } from '../errors.js';
import { syntaxErrorLocation } from './syntax-location.js';

/** What a child takes from a handler module: the handler (its default export) and its optional `parse`. */
export interface HandlerExports {
  handler: (...args: never[]) => unknown;
  parse?: (payload: unknown) => unknown;
}

/**
 * Import a handler module and check its exports (handlerExports): the one
 * rule a child applies at start and the config check applies in its
 * short-lived probe process (handler-probe.ts).
 */
export async function importHandler(file: string): Promise<HandlerExports> {
  let module: { default?: unknown; parse?: unknown };
  try {
    module = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    throw new LeaseholdError('HANDLER:LOAD_FAILED', `cannot load handler ${file}: ${await whyNotLoaded(file, error)}`, {
      retryable: false,
      cause: error,
    });
  }
  return handlerExports(module, `handler ${file}`);
}

/** A module's default export must be a function, and its `parse`, when it has one, too. */
export function handlerExports(module: { default?: unknown; parse?: unknown }, name: string): HandlerExports {
  if (typeof module.default !== 'function') {
    throw new LeaseholdError('HANDLER:NO_DEFAULT_EXPORT', `${name} has no default export function`, {
      retryable: false,
    });
  }
  const handler = module.default as (...args: never[]) => unknown;
  if (module.parse === undefined) return { handler };
  if (typeof module.parse !== 'function') {
    throw new LeaseholdError(
      'HANDLER:BAD_PARSE_EXPORT',
      `${name} exports parse, but as a ${typeof module.parse}, not a function`,
      {
        retryable: false,
      },
    );
  }
  return { handler, parse: module.parse as (payload: unknown) => unknown };
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
