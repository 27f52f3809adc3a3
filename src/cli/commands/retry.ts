/** `leasehold retry <id>` or `retry --status FAILED [--class C] [--error-code E]`: FAILED jobs run once more, now. */
import { InvalidInputError, NotFoundError } from '../../errors.js';
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
        const outcome = await store.jobRetry({ id, actor: CLI_ACTOR });
        if (outcome === 'not_found') throw new NotFoundError(`job ${id}`);
        if (outcome === 'not_failed') {
          const status = (await store.jobGet({ id }))?.status;
          throw new InvalidInputError(
            'NOT_FAILED',
            `job ${id} is ${status}, not FAILED: only FAILED jobs can be retried`,
          );
        }
        output(args.json, { id, outcome }, () => `job ${id} queued to run again`);
      });
      return;
    }
    if (args.status === undefined) throw new InvalidInputError('USAGE', USAGE);
    if (args.status.toUpperCase() !== 'FAILED')
      throw new InvalidInputError(
        'STATUS',
        `only FAILED jobs can be retried: --status must be FAILED, got ${JSON.stringify(args.status)}`,
      );
    if (args.errorCode !== undefined && args.errorCode.trim() === '')
      throw new InvalidInputError('ERROR_CODE', '--error-code must not be empty');
    await withExistingStore(args, async (ctx) => {
      await checkClassOption(args.class, ctx);
      const count = await ctx.store.jobRetryFailed({ class: args.class, errorCode: args.errorCode, actor: CLI_ACTOR });
      const of = [
        args.class === undefined ? '' : ` of class ${args.class}`,
        args.errorCode === undefined ? '' : ` with error code ${args.errorCode}`,
      ].join('');
      output(args.json, { count }, () => `${count} FAILED job(s)${of} queued to run again`);
    });
  },
});
