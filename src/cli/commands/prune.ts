/** `leasehold prune [--dry-run]`: the retention policy, once, as the supervisor runs it. */
import type { Argv, CommandModule } from 'yargs';
import { createLogger } from '../../log.js';
import { Retention, type PruneReport } from '../../retention.js';
import { action, output, resolveTarget, retentionPolicy, withStore, type GlobalArgs } from '../context.js';
import { formatDuration, formatTime, table } from '../format.js';

interface PruneArgs extends GlobalArgs {
  'dry-run': boolean;
}

export const pruneCommand: CommandModule<GlobalArgs, PruneArgs> = {
  command: 'prune',
  describe: 'delete finished jobs older than the retention policy (with their attempts and events)',
  builder: (yargs: Argv<GlobalArgs>) =>
    yargs.option('dry-run', { type: 'boolean', default: false, describe: 'only say what it would delete' }) as unknown as Argv<PruneArgs>,
  handler: action(async (args: PruneArgs) => {
    const target = resolveTarget(args);
    await withStore(target, args, { create: false }, async ({ store, clock }) => {
      const logger = createLogger({ level: 'error', file: null, maxSizeMb: 1, maxFiles: 1, supervisorId: 'cli', console: false });
      const retention = new Retention({ store, logger, clock, policy: retentionPolicy(target.config) });
      const report = await retention.prune({ dryRun: args['dry-run'] });
      output(args.json, report, () => pruneText(report));
    });
  }),
};

function pruneText(report: PruneReport): string {
  const verb = report.dry_run ? 'would delete' : 'deleted';
  return [
    table(
      ['status', 'keep days', 'finished before', report.dry_run ? 'would delete' : 'deleted'],
      report.by_status.map((line) => [line.status, String(line.older_than_days), formatTime(line.finished_before), line.count]),
    ),
    `${verb} ${report.total} job(s) with their attempts and events${report.dry_run ? '' : ` in ${formatDuration(report.duration_ms)}`}`,
  ].join('\n');
}
