/** `leasehold list [--status S] [--class C] [--limit N]`: jobs, newest first. */
import { InvalidInputError } from '../../errors.js';
import { attemptsCell } from '../../reports/job-view.js';
import { runsOf } from '../../store/policy.js';
import { JOB_STATUSES, type JobRow, type JobStatus } from '../../store/types.js';
import { checkClassOption, defineCommand, output, withExistingStore, type GlobalArgs } from '../context.js';
import { numberOption } from '../numeric-options.js';
import { clip, formatAgo, formatDuration, table } from '../format.js';

const MAX_LIMIT = 10_000;

interface ListArgs extends GlobalArgs {
  status?: string;
  class?: string;
  limit: number;
}

export const listCommand = defineCommand<ListArgs>({
  command: 'list',
  describe: 'jobs, newest first',
  options: {
    status: { type: 'string', describe: `only this status (${JOB_STATUSES.join(', ')})` },
    class: { type: 'string', describe: 'only this class' },
    limit: numberOption(
      'limit',
      { integer: true, min: 1, max: MAX_LIMIT },
      { default: 20, describe: `at most this many (up to ${MAX_LIMIT})` },
    ),
  },
  run: async (args) => {
    const status = parseStatus(args.status);
    await withExistingStore(args, async (ctx) => {
      const { store, clock } = ctx;
      await checkClassOption(args.class, ctx);
      const jobs = await store.jobList({ status, class: args.class, limit: args.limit });
      const now = clock.now();
      output(args.json, { jobs: jobs.map(listJson) }, () =>
        table(
          ['id', 'class', 'status', 'pri', 'attempts', 'created', 'run at', 'running', 'finished', 'owner', 'error'],
          jobs.map((job) => [
            job.id,
            job.class,
            job.status,
            job.priority,
            attemptsCell(job),
            formatAgo(job.created_at, now),
            job.status === 'QUEUED' ? formatAgo(job.run_at, now) : null,
            // how long a running job has run: since its start, whenever it was created
            job.status === 'RUNNING' && job.started_at !== null ? formatDuration(now - job.started_at) : null,
            formatAgo(job.finished_at, now),
            job.owner_id,
            job.error_code === null ? null : `${job.error_code}: ${clip(job.error_detail, 40)}`,
          ]),
        ),
      );
    });
  },
});

/** A list row: the row without its payload, result and lease token (`show` has them). */
export function listJson(job: JobRow): Record<string, unknown> {
  return {
    id: job.id,
    class: job.class,
    status: job.status,
    priority: job.priority,
    attempts: job.attempts,
    runs: runsOf(job),
    max_retries: job.max_retries,
    max_retries_from_class: job.max_retries_from_class,
    created_at: job.created_at,
    run_at: job.run_at,
    started_at: job.started_at,
    finished_at: job.finished_at,
    owner_id: job.owner_id,
    error_code: job.error_code,
    error_detail: job.error_detail,
    idempotency_key: job.idempotency_key,
  };
}

export function parseStatus(raw: string | undefined): JobStatus | undefined {
  if (raw === undefined) return undefined;
  const status = raw.toUpperCase();
  if (!(JOB_STATUSES as readonly string[]).includes(status)) {
    throw new InvalidInputError(
      'STATUS',
      `--status must be one of ${JOB_STATUSES.join(', ')}, got ${JSON.stringify(raw)}`,
    );
  }
  return status as JobStatus;
}
