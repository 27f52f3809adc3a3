import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import type { ClassConfig } from '../src/config/schema.js';
import type { Logger } from '../src/log.js';
import { fromWire, type Answer } from '../src/ipc/writer-protocol.js';
import { removeNamedAfterDeadPids } from '../src/pids.js';

const THREAD = fileURLToPath(new URL('./writer-thread.js', import.meta.url));

/** A writer's socket folder in the system's temp is `<SOCKET_DIR_PREFIX><its supervisor's pid>-<random>`. */
const SOCKET_DIR_PREFIX = 'leasehold-writer-';

/** Remove the socket folders of writers whose supervisor is gone: a SIGKILLed supervisor cannot remove its own. */
export function removeOrphanSocketDirs(alive: (pid: number) => boolean): void {
  removeNamedAfterDeadPids(tmpdir(), SOCKET_DIR_PREFIX, alive);
}

/**
 * A call as the thread receives it. Two are the thread's own: `backoff`
 * (the classes whose retry delays its take-backs use: a function does not
 * cross to a thread) and `close` (end the thread).
 */
export interface ThreadCall {
  id: number;
  method: string;
  params: unknown;
}

/** The supervisor's own writes, which the writer makes too (its reads stay on its own connection). */
const SUPERVISOR_WRITES: ReadonlySet<string> = new Set([
  'leasesRecoverByOwner',
  'leasesReleaseByOwner',
  'leasesRecoverExpired',
  'workerRegister',
  'workerHeartbeat',
  'workerExit',
  'classDisabledRecord',
  'classDisabledClear',
  'clockFollowWall',
  'jobsPruneBatch',
  'statsRollUp',
  'scheduleAdvance',
]);

/**
 * One writer per supervisor on SQLite: a worker thread with its own
 * connection (writer-thread.ts) makes the writes of every child (they send
 * them on its socket, `socketPath`) and the supervisor's own. Off the
 * supervisor's event loop, neither a long transaction nor a lock held by
 * another process delays its health checks. A thread that dies fails the
 * calls it had, and another takes its place.
 */
export class Writer {
  private worker: Worker;
  private next = 0;
  private readonly waiting = new Map<number, (answer: Answer) => void>();
  private closed = false;
  private classes: readonly ClassConfig[] = [];
  /** A folder of its own (mode 0700) for the socket the children connect to, named after its supervisor's pid. */
  private readonly socketDir = mkdtempSync(join(tmpdir(), `${SOCKET_DIR_PREFIX}${process.pid}-`));
  /** Where the children connect: each child's writes come straight to the thread, not through this event loop. */
  readonly socketPath = join(this.socketDir, 'writer.sock');
  /** Resolves once the thread listens on the socket (and again after a restart). */
  ready!: Promise<void>;

  constructor(
    private readonly database: string,
    private readonly logger: Logger,
  ) {
    this.worker = this.spawn();
  }

  private spawn(): Worker {
    const worker = new Worker(THREAD, {
      workerData: { database: this.database, classes: this.classes, socketPath: this.socketPath },
    });
    let listening!: () => void;
    this.ready = new Promise((resolve) => (listening = resolve));
    worker.on('message', (message: ({ id: number } & Answer) | { listening: true }) => {
      if ('listening' in message) return listening();
      const { id, ...answer } = message;
      const settle = this.waiting.get(id);
      this.waiting.delete(id);
      settle?.(answer as Answer);
    });
    worker.on('error', (error) => this.logger.error('the writer thread failed', { err: error }));
    worker.on('exit', (code) => {
      for (const settle of this.waiting.values())
        settle({ ok: false, error: { name: 'Error', message: `the writer thread exited (${code})` } });
      this.waiting.clear();
      if (this.closed) return;
      this.logger.error('the writer thread exited; starting another', { code });
      this.worker = this.spawn();
    });
    return worker;
  }

  /** Run a store method at the writer: its result, or the error it threw. */
  call(method: string, params: unknown): Promise<Answer> {
    const id = ++this.next;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.worker.postMessage({ id, method, params } satisfies ThreadCall);
    });
  }

  /** The classes in force: a take-back's retry delay is its class's backoff (the `retryDelay` it was given stays here). */
  useClasses(classes: readonly ClassConfig[]): void {
    this.classes = classes;
    this.worker.postMessage({ id: 0, method: 'backoff', params: classes } satisfies ThreadCall);
  }

  /** `store` with the supervisor's own writes made by the writer. */
  route<S extends object>(store: S): S {
    return new Proxy(store, {
      get: (target, property, receiver) => {
        if (typeof property === 'string' && SUPERVISOR_WRITES.has(property))
          return async (params: unknown) => {
            const answer = await this.call(property, withoutFunctions(params));
            if (!answer.ok) throw fromWire(answer.error);
            return answer.result;
          };
        return Reflect.get(target, property, receiver);
      },
    });
  }

  /** End the thread once the writes in hand are made (safe twice). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.worker.postMessage({ id: 0, method: 'close', params: null } satisfies ThreadCall);
    await exited;
    rmSync(this.socketDir, { recursive: true, force: true });
  }
}

/** A call's params as they cross to the thread: a function (a take-back's `retryDelay`) goes as null. */
function withoutFunctions(params: unknown): unknown {
  if (typeof params !== 'object' || params === null) return params;
  return Object.fromEntries(
    Object.entries(params).map(([key, value]) => [key, typeof value === 'function' ? null : value]),
  );
}
