#!/usr/bin/env node
/** `supervise --config queue.yaml`: the supervisor in the foreground. */
import { randomBytes } from 'node:crypto';
import { superviseArgs } from './args.js';
import { Supervisor } from './supervisor.js';
import { resolveHost } from '../src/config/host.js';
import { checkConfig } from '../src/config/deployment.js';
import { closeLogger, createLogger } from '../src/log.js';
import { openStore } from '../src/store/open.js';
import { DbAvailability, outageLog, retryWhileAway } from '../src/store/faults.js';
import { Writer } from './writer.js';
import { die, EXIT } from '../src/exit.js';
import { flushTracing, loadTracing } from '../src/tracing/gate.js';

const PROGRAM = 'supervise';

const argv = await superviseArgs(process.argv.slice(2));

try {
  // The one check `--check-config`, start-up and a reload share: what it passes starts.
  const config = await checkConfig(argv.config);
  const host = resolveHost({ configured: config.host });
  if (argv['check-config']) {
    process.stdout.write(
      `${config.file}: OK (${config.classes.length} classes: ${config.classes.map((c) => c.name).join(', ')})\n`,
    );
    process.exit(EXIT.OK);
  }
  const supervisorId = `${host}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const logger = createLogger({
    level: config.log.level,
    file: config.log.file,
    maxSizeMb: config.log.max_size_mb,
    maxFiles: config.log.max_files,
    supervisorId,
    console: true,
  });
  // guarantee 10 (Database faults are weather, not death): a database away at start is waited for, logged once.
  const opening = new DbAvailability({
    ...outageLog((level, msg, fields) => logger.log(level, msg, fields)),
    failed: () => undefined,
  });
  const store = await retryWhileAway(
    () => openStore(config.database, { statementTimeoutMs: config.statement_timeout_seconds * 1000 }),
    opening,
  );
  // SQLite: one writer for the supervisor and its children, off this event loop.
  const writer = store.driver === 'sqlite' ? new Writer(config.database, logger) : undefined;
  await writer?.ready;
  const { httpSide } = config.http === null ? {} : await import('./http-side.js');
  const supervisor = new Supervisor({ config, store, logger, supervisorId, host, writer, httpSide });

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) return supervisor.forceShutdown();
    logger.info(`${signal} received`, { event: 'SIGNAL', signal });
    void supervisor
      .shutdown()
      .then(async () => {
        await writer?.close();
        await store.close();
        await flushTracing();
        await closeLogger(logger);
        process.exit(EXIT.OK);
      })
      .catch(async (error: unknown) => {
        logger.error('shutdown failed', { err: error });
        await closeLogger(logger);
        process.exit(EXIT.FAILURE);
      });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGHUP', () => {
    logger.info('SIGHUP received: reloading the config', { event: 'SIGNAL', signal: 'SIGHUP', file: config.file });
    void supervisor.reload();
  });
  await loadTracing();
  await supervisor.start();
} catch (error) {
  die(error, PROGRAM);
}
