/**
 * The writer's thread (writer.ts): one connection to the SQLite file that
 * makes every write of the supervisor (its calls come as messages from the
 * main thread) and its children (theirs come on a Unix socket the thread
 * listens on, one connection a child: src/ipc/writer-protocol.ts). Each call runs the
 * store method it names; the store batches what arrives in one turn of this
 * thread's event loop into one transaction (group commit), so the writes
 * of every child, sent since the last commit, commit together. A busy lock
 * held by another process is waited out here, never on the supervisor's
 * own event loop.
 */
import { rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { parentPort, workerData } from 'node:worker_threads';
import { retryDelayFor } from '../src/backoff.js';
import type { ClassConfig } from '../src/config/schema.js';
import { isChildWrite, toWire, type Answer, type WriterAnswer } from '../src/ipc/writer-protocol.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/types.js';
import type { ThreadCall } from './writer.js';

const { database, classes, socketPath } = workerData as {
  database: string;
  classes: readonly ClassConfig[];
  socketPath: string;
};
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
function track(answered: Promise<void>): void {
  inFlight.add(answered);
  void answered.finally(() => inFlight.delete(answered));
}

/** The children's connections: closed with the writer. */
const connections = new Set<Socket>();

/** A child's calls on its connection: only its store's writes, each answered on the same connection. */
function serve(socket: Socket): void {
  connections.add(socket);
  socket.on('close', () => connections.delete(socket));
  // A child that dies resets its connection: that is its exit's business, not the writer's (readline repeats the error).
  socket.on('error', () => undefined);
  const lines = createInterface({ input: socket });
  lines.on('error', () => undefined);
  lines.on('line', (line) => {
    const { id, method, params } = JSON.parse(line) as { id: number; method: unknown; params: unknown };
    const answer: Promise<Answer> = isChildWrite(method)
      ? run(method, params)
      : Promise.resolve({ ok: false, error: { name: 'Error', message: `a child may not ask for ${String(method)}` } });
    track(
      answer.then((answered) => {
        if (!socket.destroyed) socket.write(`${JSON.stringify({ id, ...answered } satisfies WriterAnswer)}\n`);
      }),
    );
  });
}

// A socket left by a writer thread that died is in the way of this one's.
rmSync(socketPath, { force: true });
const server = createServer(serve);
server.listen(socketPath, () => port.postMessage({ listening: true }));

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

port.on('message', (call: ThreadCall) => {
  if (call.method === 'backoff') {
    retryDelay = retryDelayFor(call.params as readonly ClassConfig[]);
    return;
  }
  if (call.method === 'close') {
    server.close();
    void Promise.all(inFlight)
      .then(async () => (await opened?.catch(() => undefined))?.close())
      .finally(() => {
        for (const socket of connections) socket.destroy();
        port.close();
      });
    return;
  }
  track(run(call.method, call.params).then((answer) => port.postMessage({ id: call.id, ...answer })));
});
