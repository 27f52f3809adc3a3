/**
 * What a supervisor checks once as it starts, before it spawns a child:
 * this host's clock against the database server's, and the leases its
 * predecessors on this host left behind.
 */
import type { ClassConfig } from '../src/config/schema.js';
import type { Logger } from '../src/log.js';
import { isPidAlive } from '../src/pids.js';
import type { RecoveredJob, RetryDelay, SupervisorStore } from '../src/store/types.js';
import { logRecovery } from './job-log.js';
import type { MetricsSink } from './metrics-sink.js';

/** Clock offsets from the database server below this are measurement noise (round trips on a LAN). */
const CLOCK_NOISE_MS = 25;

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
 * Several hosts, one database (PostgreSQL): log how far this host's clock
 * is from the server's, and warn past half the lease slack (what the slack
 * is: DEFAULT_CLOCK_SKEW_MS), since two hosts each within half of it of the
 * server are within it of each other. Offsets under CLOCK_NOISE_MS are the
 * measurement's own noise.
 */
export async function checkClock(
  store: Pick<SupervisorStore, 'clockOffsetMs' | 'clockSkewMs'>,
  classes: readonly ClassConfig[],
  logger: Logger,
): Promise<void> {
  if (store.clockOffsetMs === undefined) return;
  const skewMs = store.clockSkewMs ?? 0;
  const slackMs = skewMs + Math.min(...classes.map((c) => (c.lease_seconds - c.heartbeat_seconds) * 1000));
  let offsetMs: number;
  try {
    offsetMs = await store.clockOffsetMs();
  } catch (error) {
    logger.warn("could not measure this host's clock against the database server's", {
      event: 'CLOCK_OFFSET',
      err: error,
    });
    return;
  }
  const fields = { event: 'CLOCK_OFFSET', offset_ms: offsetMs, clock_skew_ms: skewMs, lease_slack_ms: slackMs };
  const side =
    offsetMs === 0
      ? "in step with the database server's"
      : `${Math.abs(offsetMs)} ms ${offsetMs > 0 ? 'behind' : 'ahead of'} the database server's`;
  if (Math.abs(offsetMs) <= Math.max(slackMs / 2, CLOCK_NOISE_MS)) {
    logger.info(`this host's clock is ${side} (lease slack ${slackMs} ms)`, fields);
    return;
  }
  logger.warn(
    `this host's clock is ${side}, over half the lease slack (${slackMs} ms): another host's sweeper may take back leases of live workers ` +
      '(fencing still holds, the job runs again); keep hosts on NTP, or add clock_skew_ms to the database URL',
    fields,
  );
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
