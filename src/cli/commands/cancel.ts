/** `leasehold cancel <id>`: a queued job is cancelled at once; a held one at its worker's next heartbeat. */
import { cancelJob, type CancelResult } from '../../queue/controls.js';
import { CLI_ACTOR, defineJobCommand, output } from '../context.js';

const SAID: Record<CancelResult['outcome'], string> = {
  cancelled: 'cancelled',
  cancel_requested: 'cancel requested: its worker aborts it at the next heartbeat',
  already_requested: 'cancel was already requested',
  already_cancelled: 'was already cancelled',
};

export const cancelCommand = defineJobCommand({
  command: 'cancel <id>',
  describe: 'cancel a job (queued: at once; running: its handler is aborted)',
  run: async (id, { store, json }) => {
    const result = await cancelJob(store, id, CLI_ACTOR);
    output(json, result, () => `job ${id}: ${SAID[result.outcome]}`);
  },
});
