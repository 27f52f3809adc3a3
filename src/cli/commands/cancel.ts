/** `leasehold cancel <id>`: a queued job is cancelled at once; a held one at its worker's next heartbeat. */
import type { Argv, CommandModule } from 'yargs';
import { InvalidInputError, NotFoundError } from '../../errors.js';
import { action, CLI_ACTOR, output, parseId, resolveTarget, withStore, type GlobalArgs } from '../context.js';

interface CancelArgs extends GlobalArgs {
  id: string;
}

const SAID = {
  cancelled: 'cancelled',
  cancel_requested: 'cancel requested: its worker aborts it at the next heartbeat',
  already_requested: 'cancel was already requested',
} as const;

export const cancelCommand: CommandModule<GlobalArgs, CancelArgs> = {
  command: 'cancel <id>',
  describe: 'cancel a job (queued: at once; running: its handler is aborted)',
  builder: (yargs: Argv<GlobalArgs>) => yargs.positional('id', { type: 'string', describe: 'job id' }) as unknown as Argv<CancelArgs>,
  handler: action(async (args: CancelArgs) => {
    const id = parseId(args.id);
    await withStore(resolveTarget(args), args, { create: false }, async ({ store }) => {
      const outcome = await store.jobCancel({ id, actor: CLI_ACTOR });
      if (outcome === 'not_found') throw new NotFoundError(`job ${id}`);
      const status = (await store.jobGet({ id }))?.status ?? null;
      if (outcome === 'terminal' && status !== 'CANCELLED') {
        throw new InvalidInputError('NOT_CANCELLABLE', `job ${id} already ended ${status}: there is nothing to cancel`);
      }
      const text = outcome === 'terminal' ? 'was already cancelled' : SAID[outcome];
      output(args.json, { id, outcome: outcome === 'terminal' ? 'already_cancelled' : outcome, status }, () => `job ${id}: ${text}`);
    });
  }),
};
