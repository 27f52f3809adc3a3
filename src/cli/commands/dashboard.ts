/** `leasehold dashboard`: the web dashboard on its own (no supervisor needed), until SIGINT or SIGTERM. */
import { once } from 'node:events';
import { DashboardServer } from '../../dashboard/server.js';
import { TOKEN_ENV } from '../../config/exposure.js';
import { checkListenAddress, checkToken } from '../../dashboard/security.js';
import { InvalidInputError } from '../../errors.js';
import { closeLogger, createLogger } from '../../log.js';
import { DEFAULT_HTTP, DEFAULT_LOG } from '../../limits.js';
import { defineCommand, openContext, output, resolveTarget, type GlobalArgs } from '../context.js';
import { numberOption } from '../numeric-options.js';

interface DashboardArgs extends GlobalArgs {
  port: number;
  host: string;
  readOnly: boolean;
  token?: string;
}

export const dashboardCommand = defineCommand<DashboardArgs>({
  command: 'dashboard',
  describe: 'serve the web dashboard (overview, jobs, one job, workers, actions) until SIGINT or SIGTERM',
  options: {
    port: numberOption(
      'port',
      { integer: true, min: 0, max: 65535 },
      { default: 9470, describe: 'port to listen on (0: any free port)' },
    ),
    host: {
      type: 'string',
      default: DEFAULT_HTTP.host,
      describe: 'address to listen on; other than loopback only with a token',
    },
    'read-only': { type: 'boolean', default: false, describe: 'show no actions, and refuse them' },
    token: { type: 'string', describe: `every page and action needs this token (default: $${TOKEN_ENV})` },
  },
  run: async (args) => {
    if (args.host.trim() === '') throw new InvalidInputError('USAGE', '--host must be an address');
    // Checked before the database is opened: a refusal touches nothing.
    const token = checkToken(args.token ?? process.env[TOKEN_ENV]);
    checkListenAddress(args.host, token);
    const target = await resolveTarget(args);
    const { store, database } = await openContext(target, args, { create: false });
    const logger = createLogger({
      level: target.config?.log.level ?? DEFAULT_LOG.level,
      file: null,
      maxSizeMb: 1,
      maxFiles: 1,
      supervisorId: 'dashboard',
      console: true,
    });
    const server = new DashboardServer({
      store,
      database,
      classes: target.config?.classes,
      payloadLimitBytes: target.config?.payload_limit_bytes,
      readOnly: args.readOnly,
      token,
      logger,
      host: args.host,
      port: args.port,
    });
    try {
      const port = await server.start();
      const url = `http://${args.host.includes(':') ? `[${args.host}]` : args.host}:${port}/`;
      output(
        args.json,
        { url, read_only: args.readOnly, token_required: token !== undefined },
        () =>
          `leasehold dashboard on ${url}${args.readOnly ? ' (read-only)' : ''}${token === undefined ? '' : ' (open it once with ?token=…)'}; Ctrl-C stops it`,
      );
      await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
    } finally {
      await server.stop();
      await store.close();
      await closeLogger(logger);
    }
  },
});
