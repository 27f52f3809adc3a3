/** `leasehold prune [--dry-run]`: the retention policy, once, as the supervisor runs it. */
import { pruneFinishedJobs, retentionPolicy, type PruneReport } from '../../queue/retention.js';
import { defineCommand, output, resolveTarget, withStore, type GlobalArgs } from '../context.js';
import { formatDuration, formatTime, table } from '../format.js';

interface PruneArgs extends GlobalArgs {
  'dry-run': boolean;
}

export const pruneCommand = defineCommand<PruneArgs>({
  command: 'prune',
  describe: 'delete finished jobs older than the retention policy (with their attempts and events)',
  options: { 'dry-run': { type: 'boolean', default: false, describe: 'only say what it would delete' } },
  run: async (args) => {
    const target = await resolveTarget(args);
    await withStore(target, args, { create: false }, async ({ store, clock }) => {
      const report = await pruneFinishedJobs(store, retentionPolicy(target.config), {
        now: clock.now(),
        dryRun: args['dry-run'],
      });
      output(args.json, report, () => pruneText(report));
    });
  },
});

function pruneText(report: PruneReport): string {
  const verb = report.dry_run ? 'would delete' : 'deleted';
  return [
    table(
      ['status', 'keep days', 'finished before', report.dry_run ? 'would delete' : 'deleted'],
      report.by_status.map((line) => [
        line.status,
        String(line.older_than_days),
        formatTime(line.finished_before),
        line.count,
      ]),
    ),
    `${verb} ${report.total} job(s) with their attempts and events${report.dry_run ? '' : ` in ${formatDuration(report.duration_ms)}`}`,
  ].join('\n');
}
