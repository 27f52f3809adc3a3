/**
 * A child worker process: `node dist/child/main.js`, forked by the supervisor
 * with an IPC channel, as the leader of its own process group (so a kill of
 * the group takes the handler's subprocesses too). Its first message is its
 * resolved class config (ChildStart).
 */
import { coerceError, errorStack } from '../src/errors.js';
import { FlightRecorder } from '../src/ipc/flight-record.js';
import {
  CHILD_EXIT,
  isSupervisorToChild,
  type ChildStart,
  type ChildToSupervisor,
  type SupervisorToChild,
} from '../src/ipc/protocol.js';
import type { LogLevel } from '../src/limits.js';
import { DbAvailability, outageLog, retryWhileAway, unlessDbFault, watchAvailability } from '../src/store/faults.js';
import { openStore } from '../src/store/open.js';
import type { WorkerStore } from '../src/store/types.js';
import { flushTracing, loadTracing } from '../src/tracing/gate.js';
import { loadHandler } from './handler.js';
import { HandlerLife } from './handler-life.js';
import { withMiddleware } from './middleware.js';
import { ParentWatch, startOrphanWatchdog } from './parent-watch.js';
import { RunLoop } from './run-loop.js';
import { WriterBackedStore, WriterClient } from './writer-store.js';

function send(message: ChildToSupervisor): void {
  if (process.connected) process.send?.(message);
}

function log(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
  send({ type: 'log', level, msg, fields });
}

/** Let the last IPC messages leave before the process ends. */
async function exit(code: number): Promise<never> {
  await flushTracing();
  if (process.connected)
    await new Promise<void>((resolve) =>
      process.send?.({ type: 'log', level: 'debug', msg: 'child exiting', fields: { code } }, () => resolve()),
    );
  process.exit(code);
}

/**
 * The store, with each database fault logged once per outage and told to the
 * supervisor (its /healthz and metrics). A database that is away at start-up
 * is waited for: that is weather, not a broken config, and must not disable
 * the class.
 */
async function openWatched(
  database: string,
  writerSocket: string | null,
  statementTimeoutMs: number,
): Promise<WorkerStore> {
  const logged = outageLog(log);
  const availability = new DbAvailability({
    unavailable: (outage) => {
      logged.unavailable(outage);
      send({ type: 'db-outage', outage });
    },
    recovered: (outage, outageMs) => {
      logged.recovered(outage, outageMs);
      send({ type: 'db-outage', outage: null });
    },
    failed: (kind) => send({ type: 'db-error', kind }),
    timedOut: logged.timedOut,
  });
  const own = await retryWhileAway(() => openStore(database, { statementTimeoutMs }), availability);
  return watchAvailability(
    writerSocket === null ? own : new WriterBackedStore(own, new WriterClient(writerSocket)),
    availability,
  );
}

/** What the supervisor sends once the child has started. */
type ChildMessage = Exclude<SupervisorToChild, ChildStart>;

/**
 * The supervisor's messages: the first must be the start; the rest to `onMessage`'s handler. What comes before the handler
 * is set (a drain while the child still sets up) waits for it: dropped, the
 * child would serve on after its supervisor has gone.
 */
function listen(): {
  started: Promise<ChildStart>;
  onMessage: (handler: (message: ChildMessage) => void) => void;
} {
  let handler: ((message: ChildMessage) => void) | undefined;
  const early: ChildMessage[] = [];
  const started = new Promise<ChildStart>((resolve) => {
    process.on('message', (message: unknown) => {
      if (!isSupervisorToChild(message)) return;
      if (message.type === 'start') resolve(message);
      else if (handler === undefined) early.push(message);
      else handler(message);
    });
  });
  const onMessage = (h: (message: ChildMessage) => void) => {
    handler = h;
    for (const message of early.splice(0)) h(message);
  };
  return { started, onMessage };
}

/**
 * An error nobody caught (thrown in a timer, a rejection nobody awaited)
 * leaves the child in a state nobody can vouch for, so it still ends the
 * child, as Node would; first the child tells the supervisor what it was,
 * so that the attempt it blames says why, not only that the child crashed.
 */
function exitOnUncaught(): void {
  let dying = false;
  process.on('uncaughtException', (error, origin) => {
    if (dying) return;
    dying = true;
    const message: ChildToSupervisor = {
      type: 'last-words',
      origin,
      error: coerceError(error),
      stack: errorStack(error) ?? null,
    };
    if (!process.connected) {
      process.stderr.write(`${origin}: ${message.stack ?? message.error.message}\n`);
      process.exit(1);
    }
    // The message must leave before the exit; a channel that cannot take it does not hold the exit up.
    setTimeout(() => process.exit(1), 1_000).unref();
    process.send?.(message, () => process.exit(1));
  });
}

/** Left of the shutdown grace after a teardown's deadline: for the store to close and the child to exit. */
const EXIT_MARGIN_MS = 500;

/** Drain, then tear down with what is left of the grace (less the margin to exit in). */
async function drainThenTeardown(loop: RunLoop, life: HandlerLife, graceMs: number): Promise<void> {
  const drainStarted = Date.now();
  await loop.drain();
  const left = graceMs - (Date.now() - drainStarted);
  await life.end(Math.max(0, left - Math.min(EXIT_MARGIN_MS, left / 4)), log);
}

async function main(): Promise<void> {
  let store: WorkerStore | undefined;
  let loop: RunLoop | undefined;
  let life: HandlerLife | undefined;
  let killGraceMs = 5_000;
  /** Whether its writes are the supervisor's writer's: with the supervisor gone, it can write nothing. */
  let throughWriter = false;

  /** Stop without waiting for the handler beyond a short grace: abort, then write the job's outcome ourselves. */
  const stopNow = (reason: string): Promise<void> => loop?.stop(reason, killGraceMs / 2) ?? Promise.resolve();

  const watch = new ParentWatch((why) => {
    // Orphaned: hand back what we hold, then take the handler's subprocesses down with us. Without a
    // writer nothing can be handed back: stop at once, and the jobs come back as after any death.
    void (async () => {
      if (!throughWriter) await stopNow(`supervisor gone (${why})`).catch(() => undefined);
      await store?.close().catch(() => undefined);
      try {
        process.kill(-process.pid, 'SIGKILL');
      } catch {
        // not a group leader: nothing else to take down
      }
      process.exit(CHILD_EXIT.ORPHANED);
    })();
  });
  watch.start();
  startOrphanWatchdog();
  exitOnUncaught();
  // However the child ends (a handler's process.exit, an uncaught error), what its loop counted and has not told yet
  // goes: a small message sent at exit leaves at once while the channel is open. Only a kill or a fatal signal loses it.
  process.on('exit', () => loop?.reportNow());

  // SIGTERM comes from the supervisor killing us (runtime, memory, a blocked loop): it takes the running job back.
  process.on('SIGTERM', () => {
    void (loop?.abandon() ?? Promise.resolve()).then(async () => {
      await store?.close();
      await exit(CHILD_EXIT.OK);
    });
  });

  const supervisor = listen();
  const start = await supervisor.started;
  await loadTracing();
  try {
    killGraceMs = start.config.kill_grace_seconds * 1000;
    const loaded = await loadHandler(start.config.handler, start.config.middleware);
    life = await HandlerLife.start(loaded, start.config.name, log);
    store = await openWatched(start.database, start.writer, start.statementTimeoutMs);
    throughWriter = start.writer !== null;
    const recorder = new FlightRecorder(start.flightRecord);
    loop = new RunLoop({
      store,
      config: start.config,
      handler: withMiddleware(loaded.handler, loaded.middleware),
      parse: loaded.parse,
      resources: life.resources,
      resultLimitBytes: start.resultLimitBytes,
      ownerId: start.workerId,
      send,
      log,
      recorder,
      successLines: start.successLines,
    });
  } catch (error) {
    send({ type: 'startup-failed', error: coerceError(error) });
    await exit(CHILD_EXIT.STARTUP_FAILED);
    return;
  }

  const running = loop;
  const handlerLife = life;
  // Started first: a drain that came during the set-up, delivered next, stops it before its first claim.
  running.start();
  supervisor.onMessage((message) => {
    if (message.type === 'ping') return send({ type: 'pong' });
    if (message.type === 'wake') return running.wake();
    if (message.type === 'success-lines') return running.successLines(message.on);
    const stopping =
      message.type === 'drain' ? drainThenTeardown(running, handlerLife, message.graceMs) : stopNow(message.reason);
    void stopping.then(async () => {
      await store?.close();
      await exit(CHILD_EXIT.OK);
    });
  });
  // A listener that lost the database is part of the outage the store's watch logs once.
  const onListenError = unlessDbFault((error) =>
    log('warn', 'wake-ups interrupted (reconnecting); polling meanwhile', { err: coerceError(error) }),
  );
  // Woken on enqueue instead of waiting out a poll; the poll stays as the fallback (also while LISTEN waits for the database).
  const wakes = await retryWhileAway(async () =>
    store.subscribe?.([start.config.name], () => running.wake(), onListenError),
  );
  if (wakes !== undefined) running.watchWakes(wakes);
  send({ type: 'ready' });
}

await main();
