/** `leasehold retry <id>` or `retry --status FAILED [--class C] [--error-code E]`: FAILED jobs run once more, now. */
import { InvalidInputError } from '../../errors.js';
import { checkRetryFilter, retryFailed, retryJob } from '../../queue/controls.js';
import {
  checkClassOption,
  CLI_ACTOR,
  defineCommand,
  JOB_ID_ARG,
  output,
  parseId,
  withExistingStore,
  type GlobalArgs,
} from '../context.js';

interface RetryArgs extends GlobalArgs {
  id?: string;
  status?: string;
  class?: string;
  errorCode?: string;
}

const USAGE = 'give a job id, or --status FAILED [--class C] [--error-code E]';
const FLAGS = { status: '--status', class: '--class', errorCode: '--error-code' };

export const retryCommand = defineCommand<RetryArgs>({
  command: 'retry [id]',
  describe: 'run a FAILED job once more, or with --status FAILED every FAILED job (of --class, with --error-code)',
  positionals: { id: JOB_ID_ARG },
  options: {
    status: { type: 'string', describe: 'FAILED: every failed job' },
    class: { type: 'string', describe: 'with --status: only this class' },
    'error-code': { type: 'string', describe: 'with --status: only jobs that failed with this error code' },
  },
  run: async (args) => {
    if (args.id !== undefined) {
      if (args.status !== undefined || args.class !== undefined || args.errorCode !== undefined)
        throw new InvalidInputError('USAGE', `${USAGE}, not both`);
      const id = parseId(args.id);
      await withExistingStore(args, async ({ store }) => {
        output(args.json, await retryJob(store, id, CLI_ACTOR), () => `job ${id} queued to run again`);
      });
      return;
    }
    if (args.status === undefined) throw new InvalidInputError('USAGE', USAGE);
    const filter = { status: args.status, class: args.class, errorCode: args.errorCode };
    checkRetryFilter(filter, FLAGS);
    await withExistingStore(args, async (ctx) => {
      await checkClassOption(args.class, ctx);
      const result = await retryFailed(ctx.store, filter, CLI_ACTOR);
      const of = [
        args.class === undefined ? '' : ` of class ${args.class}`,
        args.errorCode === undefined ? '' : ` with error code ${args.errorCode}`,
      ].join('');
      output(args.json, result, () => `${result.count} FAILED job(s)${of} queued to run again`);
    });
  },
});
