import type { Logger } from '../src/log.js';
import { unlessDbFault } from '../src/store/faults.js';
import type { SupervisorStore } from '../src/store/types.js';

/** The store calls the disabled record makes. */
export type DisabledStore = Pick<SupervisorStore, 'classDisabledRecord' | 'classDisabledClear'>;

/**
 * Tell the database that a supervisor's class is disabled for `reason`, or
 * (undefined) no longer: a dashboard, maybe on another host, reads it there.
 * With the database away the record is not written; the log has the event
 * all the same.
 */
export function recordDisabled(
  store: DisabledStore,
  key: { supervisorId: string; class: string },
  reason: string | undefined,
  logger: Logger,
): void {
  const write = reason === undefined ? store.classDisabledClear(key) : store.classDisabledRecord({ ...key, reason });
  void write.catch(
    unlessDbFault((error) => logger.error('could not record whether the class is disabled', { err: error })),
  );
}
