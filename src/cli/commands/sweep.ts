/** `leasehold sweep`: take back expired leases now, as the supervisor's sweeper does. */
import { retryDelayFor } from '../../backoff.js';
import { DEFAULT_SWEEPER } from '../../limits.js';
import { recoverExpiredLeases } from '../../queue/sweep.js';
import { defineCommand, output, resolveTarget, withStore, type GlobalArgs } from '../context.js';
import { formatTime, table } from '../format.js';

export const sweepCommand = defineCommand<GlobalArgs>({
  command: 'sweep',
  describe: 'take back jobs whose lease expired (their worker died or went silent)',
  run: async (args) => {
    const target = await resolveTarget(args);
    const { config } = target;
    await withStore(target, args, { create: false }, async ({ store }) => {
      const recovered = await recoverExpiredLeases(store, {
        batchSize: config?.sweeper.batch_size ?? DEFAULT_SWEEPER.batch_size,
        actor: 'cli',
        retryDelay: retryDelayFor(config?.classes ?? []),
      });
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
              rows.map((r) => [
                r.id,
                r.class,
                r.attempt,
                r.owner_id,
                r.status,
                r.run_at === null ? null : formatTime(r.run_at),
              ]),
            )}`,
      );
    });
  },
});
