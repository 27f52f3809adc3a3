import { importHandler, importMiddleware } from '../src/config/handler-module.js';
import type { Handler, HandlerSetup, HandlerTeardown, Middleware, PayloadParser } from '../src/handler.js';

/** A handler module as a child runs it: its default export, its optional exports, and the class's middleware. */
export interface LoadedHandler {
  handler: Handler;
  parse?: PayloadParser;
  setup?: HandlerSetup;
  teardown?: HandlerTeardown;
  middleware: Middleware[];
}

/** Import a handler module and the class's middleware modules, and check their exports (the rule the config check applies too). */
export async function loadHandler(file: string, middlewareFiles: readonly string[]): Promise<LoadedHandler> {
  const [exports, middleware] = await Promise.all([
    importHandler(file),
    Promise.all(middlewareFiles.map(async (middlewareFile) => (await importMiddleware(middlewareFile)).middleware)),
  ]);
  return { ...exports, middleware } as LoadedHandler;
}
