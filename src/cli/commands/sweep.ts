/** `leasehold sweep`: take back expired leases now, as the supervisor's sweeper does. */
import type { Argv, CommandModule } from 'yargs';
import { createLogger } from '../../log.js';
import { retryDelayMs } from '../../queue/backoff.js';
import { Sweeper } from '../../sweeper.js';
import { action, classConfig, output, resolveTarget, withStore, type GlobalArgs } from '../context.js';
import { formatTime, table } from '../format.js';

const DEFAULT_BACKOFF = { baseSeconds: 2, maxSeconds: 300, jitter: true };

export const sweepCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'sweep',
  describe: 'take back jobs whose lease expired (their worker died or went silent)',
  builder: (yargs: Argv<GlobalArgs>) => yargs,
  handler: action(async (args: GlobalArgs) => {
    const target = resolveTarget(args);
    const { config } = target;
    await withStore(target, args, { create: false }, async ({ store }) => {
      const logger = createLogger({ level: 'error', file: null, maxSizeMb: 1, maxFiles: 1, supervisorId: 'cli', console: false });
      const sweeper = new Sweeper({
        store,
        logger,
        intervalSeconds: config?.sweeper.interval_seconds ?? 10,
        batchSize: config?.sweeper.batch_size ?? 100,
        actor: 'cli',
        retryDelay: (jobClass, attempt) => {
          const backoff = classConfig(config, jobClass)?.backoff;
          return retryDelayMs(backoff === undefined ? DEFAULT_BACKOFF : { baseSeconds: backoff.base_seconds, maxSeconds: backoff.max_seconds, jitter: backoff.jitter }, attempt);
        },
      });
      const recovered = await sweeper.sweep();
      const rows = recovered.map((job) => ({
        id: job.id,
        class: job.class,
        attempt: job.attempt,
        owner_id: job.ownerId,
        status: job.status,
        run_at: job.runAt,
        released: job.released,
      }));
      output(args.json, { count: rows.length, recovered: rows }, () =>
        rows.length === 0
          ? 'no expired leases'
          : `took back ${rows.length} job(s) whose lease expired\n${table(
              ['id', 'class', 'attempt', 'owner', 'now', 'retry at'],
              rows.map((r) => [r.id, r.class, r.attempt, r.owner_id, r.released ? 'QUEUED (unstarted, no retry spent)' : r.status, r.run_at === null ? null : formatTime(r.run_at)]),
            )}`,
      );
    });
  }),
};
