/** `leasehold reload`: tell this host's supervisor to re-read its queue.yaml (SIGHUP), after checking the file here first. */
import { resolveHost } from '../../config/host.js';
import { InvalidInputError } from '../../errors.js';
import { STALE_SUPERVISOR_MS } from '../../queue/registry.js';
import { defineCommand, output, withExistingStore, type GlobalArgs } from '../context.js';

export const reloadCommand = defineCommand<GlobalArgs>({
  command: 'reload',
  describe: "make this host's supervisor re-read queue.yaml (SIGHUP); a bad config is refused here and there, and the old one keeps running",
  run: async (args) => {
    // --config is what the supervisor re-reads: loading it here reports a bad file (exit 2) before anyone is signalled.
    if (args.config === undefined) throw new InvalidInputError('USAGE', 'reload needs --config queue.yaml (the file the supervisor re-reads)');
    await withExistingStore(args, async ({ store, clock, config }) => {
      const host = resolveHost({ configured: config?.host ?? null });
      const now = clock.now();
      // A fresh registry heartbeat says the pid is still that supervisor's, not a reused one: SIGHUP would end most other processes.
      const supervisors = (await store.workerListLiveOnHost({ host })).filter(
        (worker) => worker.kind === 'supervisor' && now - worker.heartbeat_at <= STALE_SUPERVISOR_MS && signal(worker.pid),
      );
      if (supervisors.length === 0) {
        throw new InvalidInputError('NO_SUPERVISOR', `no supervisor of host "${host}" is running on this database (leasehold workers shows none alive): nothing to reload`);
      }
      const signalled = supervisors.map((worker) => ({ id: worker.id, pid: worker.pid }));
      output(args.json, { host, signalled }, () =>
        signalled
          .map((worker) => `sent SIGHUP to supervisor ${worker.id} (pid ${worker.pid}): its log says CONFIG_RELOADED or CONFIG_RELOAD_REJECTED`)
          .join('\n'),
      );
    });
  },
});

function signal(pid: number): boolean {
  try {
    process.kill(pid, 'SIGHUP');
    return true;
  } catch {
    return false; // ESRCH: gone since its last heartbeat
  }
}
