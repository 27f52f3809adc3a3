/** `leasehold cancel <id>`: a queued job is cancelled at once; a held one at its worker's next heartbeat. */
import { InvalidInputError, NotFoundError } from '../../errors.js';
import { CLI_ACTOR, defineJobCommand, output } from '../context.js';

const SAID = {
  cancelled: 'cancelled',
  cancel_requested: 'cancel requested: its worker aborts it at the next heartbeat',
  already_requested: 'cancel was already requested',
} as const;

export const cancelCommand = defineJobCommand({
  command: 'cancel <id>',
  describe: 'cancel a job (queued: at once; running: its handler is aborted)',
  run: async (id, { store, json }) => {
    const outcome = await store.jobCancel({ id, actor: CLI_ACTOR });
    if (outcome === 'not_found') throw new NotFoundError(`job ${id}`);
    const status = (await store.jobGet({ id }))?.status ?? null;
    if (outcome === 'terminal' && status !== 'CANCELLED') {
      throw new InvalidInputError('NOT_CANCELLABLE', `job ${id} already ended ${status}: there is nothing to cancel`);
    }
    const text = outcome === 'terminal' ? 'was already cancelled' : SAID[outcome];
    output(
      json,
      { id, outcome: outcome === 'terminal' ? 'already_cancelled' : outcome, status },
      () => `job ${id}: ${text}`,
    );
  },
});
