/**
 * `node handler-probe.js <file> [handler|middleware]`: import a handler (or
 * middleware) module as a child would, and print `{"problem": null}` or why
 * it cannot be used. Run by the config check in a process of its own, so
 * that a module's top-level code never runs in the supervisor or the CLI.
 */
import { importHandler, importMiddleware } from './handler-module.js';

const importModule = process.argv[3] === 'middleware' ? importMiddleware : importHandler;
const problem = await importModule(process.argv[2] ?? '').then(
  () => null,
  (error: unknown) => (error as Error).message,
);
// Exit at once: a module may leave timers or sockets open that would keep the probe alive.
process.stdout.write(JSON.stringify({ problem }), () => process.exit(0));
