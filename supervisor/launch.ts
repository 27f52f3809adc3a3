/**
 * Start-up and shutdown of a supervisor in this process, shared by
 * `supervise` (main.ts, which maps its signals) and startSupervisor
 * (start.ts, the application's handle): the config checked, the log, the
 * database (waited for while it is away), SQLite's writer, the children
 * and the chores; at the stop, each closed in turn.
 */
import { randomBytes } from 'node:crypto';
import { checkConfig } from '../src/config/deployment.js';
import { resolveHost } from '../src/config/host.js';
import type { ConfigSource } from '../src/config/load.js';
import { closeLogger, createLogger, type Logger } from '../src/log.js';
import { DbAvailability, outageLog, retryWhileAway } from '../src/store/faults.js';
import { openStore } from '../src/store/open.js';
import { flushTracing, loadTracing } from '../src/tracing/gate.js';
import { Supervisor } from './supervisor.js';
import { Writer } from './writer.js';

/** What startSupervisor starts, and how it logs. */
export interface StartSupervisorOptions {
  /**
   * The path of queue.yaml, whose relative paths are its folder's, as for
   * `supervise --config`; or its content as an object, whose relative paths
   * are the working directory's.
   */
  config: ConfigSource;
  /** Log lines on stdout too, beside the config's `log.file` (default true, as `supervise` does). */
  console?: boolean;
  /** Replace a class's children when its handler or middleware files change, as `supervise --watch` does (development). */
  watch?: boolean;
}

/** What `supervise` needs besides the public handle: the supervisor itself and its logger. */
export interface LaunchedSupervisor {
  supervisor: Supervisor;
  logger: Logger;
  /** Shut down once (later calls get the same promise), then close the writer, the store, tracing and the log. */
  stop(): Promise<void>;
}

/** `created`: called once the supervisor exists, before it starts (`supervise` maps its signals there: one may come during start-up). */
export async function launchSupervisor(
  options: StartSupervisorOptions,
  created?: (launched: LaunchedSupervisor) => void,
): Promise<LaunchedSupervisor> {
  // The one check `--check-config`, start-up and a reload share: what it passes starts.
  const config = await checkConfig(options.config);
  const host = resolveHost({ configured: config.host });
  const supervisorId = `${host}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const logger = createLogger({
    level: config.log.level,
    file: config.log.file,
    maxSizeMb: config.log.max_size_mb,
    maxFiles: config.log.max_files,
    supervisorId,
    console: options.console ?? true,
  });
  // What is open, closed last first: at the stop, or when start-up fails (an application's process goes on without them).
  const opened: (() => Promise<void>)[] = [() => closeLogger(logger)];
  const closeOpened = async () => {
    const closing = opened.splice(0).reverse();
    let failure: unknown;
    for (const close of closing) await close().catch((error: unknown) => (failure ??= error));
    if (failure !== undefined) throw failure;
  };
  try {
    // guarantee 10 (Database faults are weather, not death): a database away at start is waited for, logged once.
    const opening = new DbAvailability({
      ...outageLog((level, msg, fields) => logger.log(level, msg, fields)),
      failed: () => undefined,
    });
    const store = await retryWhileAway(
      () => openStore(config.database, { statementTimeoutMs: config.statement_timeout_seconds * 1000 }),
      opening,
    );
    opened.push(() => store.close());
    // SQLite: one writer for the supervisor and its children, off this event loop.
    const writer = store.driver === 'sqlite' ? new Writer(config.database, logger) : undefined;
    if (writer !== undefined) opened.push(() => writer.close());
    await writer?.ready;
    const { httpSide } = config.http === null ? {} : await import('./http-side.js');
    const supervisor = new Supervisor({
      config,
      store,
      logger,
      supervisorId,
      host,
      writer,
      httpSide,
      watch: options.watch,
    });
    await loadTracing();
    // Spans exported before the log closes (closed last: it was opened first).
    opened.splice(1, 0, flushTracing);
    opened.push(() => supervisor.shutdown());
    let stopped: Promise<void> | undefined;
    const launched = { supervisor, logger, stop: () => (stopped ??= closeOpened()) };
    created?.(launched);
    await supervisor.start();
    return launched;
  } catch (error) {
    await closeOpened().catch(() => undefined);
    throw error;
  }
}
