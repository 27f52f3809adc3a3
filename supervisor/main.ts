#!/usr/bin/env node
/** `supervise --config queue.yaml`: the supervisor in the foreground (start.ts), its signals mapped. */
import { superviseArgs } from './args.js';
import { launchSupervisor } from './launch.js';
import { checkConfig } from '../src/config/deployment.js';
import { resolveHost } from '../src/config/host.js';
import { die, EXIT } from '../src/exit.js';

const PROGRAM = 'supervise';

const argv = await superviseArgs(process.argv.slice(2));

try {
  if (argv['check-config']) {
    // The one check start-up and a reload share: what it passes starts.
    const config = await checkConfig(argv.config);
    resolveHost({ configured: config.host }); // a bad LEASEHOLD_HOST is refused here too
    process.stdout.write(
      `${config.file}: OK (${config.classes.length} classes: ${config.classes.map((c) => c.name).join(', ')})\n`,
    );
    process.exit(EXIT.OK);
  }
  await launchSupervisor({ config: argv.config, watch: argv.watch }, ({ supervisor, logger, stop }) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals += 1;
      if (signals > 1) return supervisor.forceShutdown();
      logger.info(`${signal} received`, { event: 'SIGNAL', signal });
      void stop().then(
        () => process.exit(EXIT.OK),
        (error: unknown) => die(new Error(`shutdown failed: ${(error as Error).message}`), PROGRAM),
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    process.on('SIGHUP', () => {
      logger.info('SIGHUP received: reloading the config', {
        event: 'SIGNAL',
        signal: 'SIGHUP',
        file: supervisor.configFile,
      });
      void supervisor.reload();
    });
  });
} catch (error) {
  die(error, PROGRAM);
}
