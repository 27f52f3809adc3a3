import { importHandler } from '../src/config/handler-module.js';
import type { Handler, PayloadParser } from '../src/handler.js';

/** A handler module as a child runs it: its default export, and its optional `parse` export. */
export interface LoadedHandler {
  handler: Handler;
  parse?: PayloadParser;
}

/** Import a handler module and check its exports (the rule the config check applies too). */
export async function loadHandler(file: string): Promise<LoadedHandler> {
  return (await importHandler(file)) as LoadedHandler;
}
