import { pathToFileURL } from 'node:url';
import { LeaseholdError } from '../errors.js';
import type { HandlerSetup, HandlerTeardown, PayloadParser } from '../handler.js';
import { syntaxErrorLocation } from './syntax-location.js';
import { isTypeScript, loadTypeScriptSupport } from './typescript-loader.js';

type AnyFunction = (...args: never[]) => unknown;

/** What a child takes from a handler module: the handler (its default export) and its optional exports. */
export interface HandlerExports {
  handler: AnyFunction;
  parse?: PayloadParser;
  setup?: HandlerSetup;
  teardown?: HandlerTeardown;
}

/** What a child takes from a middleware module: its default export. */
export interface MiddlewareExports {
  middleware: AnyFunction;
}

/** The kinds of module queue.yaml names, each checked by its own rule. */
export type ModuleKind = 'handler' | 'middleware';

/** A handler module's optional exports: each must be a function when it is there. */
const OPTIONAL_EXPORTS = ['parse', 'setup', 'teardown'] as const;

/** A module's exports; `object`, so that a typed module (runHandler's) is one too. */
type ModuleNamespace = object;

/**
 * Import a handler module and check its exports (handlerExports): the one
 * rule a child applies at start and the config check applies in its
 * short-lived probe process (handler-probe.ts).
 */
export async function importHandler(file: string): Promise<HandlerExports> {
  return handlerExports(await importModule(file, 'handler'), `handler ${file}`);
}

/** Import a middleware module and check its default export, as importHandler does a handler's. */
export async function importMiddleware(file: string): Promise<MiddlewareExports> {
  return middlewareExports(await importModule(file, 'middleware'), `middleware ${file}`);
}

async function importModule(file: string, kind: ModuleKind): Promise<ModuleNamespace> {
  if (isTypeScript(file)) await loadTypeScriptSupport(file);
  try {
    return esModuleOf((await import(pathToFileURL(file).href)) as ModuleNamespace);
  } catch (error) {
    throw new LeaseholdError('HANDLER:LOAD_FAILED', `cannot load ${kind} ${file}: ${await whyNotLoaded(file, error)}`, {
      retryable: false,
      cause: error,
    });
  }
}

/**
 * A CommonJS module compiled from ES module syntax (by tsc, or by tsx for a
 * `.ts` file outside a `"type": "module"` package) marks its exports
 * `__esModule`, and its `export default` is `exports.default`: its exports
 * are the module's, as a bundler or TypeScript's esModuleInterop reads them.
 */
function esModuleOf(namespace: ModuleNamespace): ModuleNamespace {
  const exported = (namespace as { default?: unknown }).default;
  const compiled = typeof exported === 'object' && exported !== null && '__esModule' in exported;
  return compiled && exported.__esModule === true ? exported : namespace;
}

/** A module's default export must be a function, and each optional export it has, too. */
export function handlerExports(module: ModuleNamespace, name: string): HandlerExports {
  const exports: HandlerExports = { handler: defaultFunction(module, name) };
  for (const key of OPTIONAL_EXPORTS) {
    const value = (module as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (typeof value !== 'function')
      throw new LeaseholdError(
        `HANDLER:BAD_${key.toUpperCase()}_EXPORT`,
        `${name} exports ${key}, but as a ${typeof value}, not a function`,
        { retryable: false },
      );
    exports[key] = value as never;
  }
  return exports;
}

function middlewareExports(module: ModuleNamespace, name: string): MiddlewareExports {
  return { middleware: defaultFunction(module, name) };
}

function defaultFunction(module: ModuleNamespace, name: string): AnyFunction {
  const { default: exported } = module as { default?: unknown };
  if (typeof exported !== 'function')
    throw new LeaseholdError('HANDLER:NO_DEFAULT_EXPORT', `${name} has no default export function`, {
      retryable: false,
    });
  return exported as AnyFunction;
}

/** The error's first line; for a syntax error, its name and where it is (`(at /srv/h.mjs:2:17)`). */
async function whyNotLoaded(file: string, error: unknown): Promise<string> {
  // tsx's compiler (esbuild) says where under its first line: `Transform failed with 1 error:`.
  if (error instanceof Error && error.name === 'TransformError') return error.message.split('\n').slice(1).join('; ');
  if (!(error instanceof SyntaxError)) return firstLine(error);
  const where = await syntaxErrorLocation(file, error);
  return `${error.name}: ${firstLine(error)}${where === undefined ? '' : ` (at ${where})`}`;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}
