/**
 * The writer's thread (writer.ts): one connection to the SQLite file that
 * makes every write of the supervisor and its children. Each call runs the
 * store method it names; the store batches what arrives in one turn of this
 * thread's event loop into one transaction (group commit), so the writes
 * of every child, sent since the last commit, commit together. A busy lock
 * held by another process is waited out here, never on the supervisor's
 * own event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { retryDelayFor } from '../src/backoff.js';
import type { ClassConfig } from '../src/config/schema.js';
import { toWire, type Answer } from '../src/ipc/writer-protocol.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/types.js';
import type { ThreadCall } from './writer.js';

const { database, classes } = workerData as { database: string; classes: readonly ClassConfig[] };
const port = parentPort!;
/** The retry delays of the classes in force, for the take-backs (writer.ts, useClasses). */
let retryDelay = retryDelayFor(classes);

/** The store, opened at the first call; a failed open is tried again at the next (a database away is weather). */
let opened: Promise<Store> | undefined;
const store = (): Promise<Store> =>
  (opened ??= openStore(database).catch((error: unknown) => {
    opened = undefined;
    throw error;
  }));

async function run(method: string, params: unknown): Promise<Answer> {
  try {
    const target = await store();
    const operation = (target as unknown as Record<string, unknown>)[method];
    if (typeof operation !== 'function') throw new Error(`the writer makes no ${method}`);
    const withDelay = isRecord(params) && 'retryDelay' in params ? { ...params, retryDelay } : params;
    return { ok: true, result: await (operation as (p: unknown) => Promise<unknown>).call(target, withDelay) };
  } catch (error) {
    return { ok: false, error: toWire(error) };
  }
}

/** The calls being made: a close waits for them. */
const inFlight = new Set<Promise<void>>();

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

port.on('message', (call: ThreadCall) => {
  if (call.method === 'backoff') {
    retryDelay = retryDelayFor(call.params as readonly ClassConfig[]);
    return;
  }
  if (call.method === 'close') {
    void Promise.all(inFlight)
      .then(async () => (await opened?.catch(() => undefined))?.close())
      .finally(() => port.close());
    return;
  }
  const answered = run(call.method, call.params).then((answer) => port.postMessage({ id: call.id, ...answer }));
  inFlight.add(answered);
  void answered.finally(() => inFlight.delete(answered));
});
