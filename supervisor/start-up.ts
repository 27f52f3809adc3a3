/**
 * What a supervisor checks once as it starts, before it spawns a child: the
 * leases its predecessors on this host left behind, and their files.
 */
import { removeOrphanFlightFiles } from '../src/ipc/flight-record.js';
import type { Logger } from '../src/log.js';
import { isPidAlive } from '../src/pids.js';
import type { RecoveredJob, RetryDelay, SupervisorStore } from '../src/store/types.js';
import { logRecovery } from './job-log.js';
import type { MetricsSink } from './metrics-sink.js';
import { removeOrphanSocketDirs } from './writer.js';

export interface TakeBackOptions {
  store: SupervisorStore;
  logger: Logger;
  supervisorId: string;
  host: string;
  retryDelay: RetryDelay;
  metrics: MetricsSink;
  /** Jobs taken back: wake their classes' children when they are due. */
  wakeFor: (jobs: readonly RecoveredJob[]) => void;
}

/**
 * Children of an earlier supervisor on this host whose pids are gone held
 * leases nobody will renew: take them back now instead of waiting for them
 * to expire. Live pids are left alone (still winding down; the sweeper is
 * the backstop). Only workers recorded with this supervisor's own host
 * identity: another host's pids mean nothing here, its dead workers' jobs
 * come back through lease expiry and the sweeper.
 */
export async function takeBackFromPreviousRuns(options: TakeBackOptions): Promise<void> {
  const { store, logger, supervisorId, host, metrics } = options;
  for (const worker of await store.workerListLiveOnHost({ host })) {
    if (worker.host !== host || worker.id === supervisorId || isPidAlive(worker.pid)) continue;
    if (worker.kind === 'child') {
      const recovered = await store.leasesRecoverByOwner({
        ownerId: worker.id,
        errorCode: 'WORKER:CRASHED',
        errorDetail: `child pid ${worker.pid} of an earlier supervisor is gone`,
        event: 'RECOVERED',
        actor: supervisorId,
        retryDelay: options.retryDelay,
      });
      for (const job of recovered)
        logRecovery(logger.child({ class: worker.class ?? undefined }), job, 'WORKER:CRASHED');
      options.wakeFor(recovered);
      metrics.jobsRecovered(recovered, 'WORKER:CRASHED', 'startup');
    } else {
      await store.classDisabledClear({ supervisorId: worker.id });
    }
    await store.workerExit({ id: worker.id, state: 'exited', exitCode: null, exitSignal: null });
  }
}

/** Remove the files of supervisors on this host that are gone: their children's flight records and their writers' socket folders. */
export function removeFilesOfDeadSupervisors(): void {
  removeOrphanFlightFiles(isPidAlive);
  removeOrphanSocketDirs(isPidAlive);
}
