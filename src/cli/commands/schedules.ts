/** `leasehold schedules`: each cron schedule of the config, its next run (computed) and its last run (from the database). */
import { InvalidInputError } from '../../errors.js';
import { schedulesReport } from '../../queue/schedules.js';
import { defineCommand, output, resolveTarget, withStore, type GlobalArgs } from '../context.js';
import { formatWhen, table } from '../format.js';

export const schedulesCommand = defineCommand<GlobalArgs>({
  command: 'schedules',
  describe: 'the cron schedules of the config: next run, last run',
  run: async (args) => {
    // The schedules live in queue.yaml; the database only knows how far each has run.
    if (args.config === undefined)
      throw new InvalidInputError('USAGE', 'schedules needs --config queue.yaml (the schedules are defined there)');
    const target = await resolveTarget(args);
    await withStore(target, args, { create: false }, async ({ store, clock }) => {
      const report = await schedulesReport(store, { classes: target.config?.classes ?? [] }, clock.now());
      const { now, schedules } = report;
      output(args.json, report, () =>
        table(
          ['class', 'name', 'cron', 'timezone', 'catch_up', 'next run', 'last run', 'last job'],
          schedules.map((s) => [
            s.class,
            s.name,
            s.cron,
            s.timezone,
            s.catch_up,
            formatWhen(s.next_run_at, now),
            formatWhen(s.last_run_at, now),
            s.last_job_id,
          ]),
        ),
      );
    });
  },
});
