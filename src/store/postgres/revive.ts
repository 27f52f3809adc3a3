/**
 * The PostgreSQL driver's side of flow-rules.ts's revivedState: inside the
 * transaction that retried failed jobs, each dependent their failure
 * cancelled is WAITING again when no other parent stands failed or
 * cancelled, and its own cancelled dependents in turn, down the chain.
 */
import type { OnParentFailure, JobStatus } from '../data.js';
import { revivedState } from '../flow-rules.js';
import { EVENTS } from '../timeline.js';
import { rows, type Db } from './connection.js';
import { record } from './settlement.js';
import { FLOW_SQL } from './sql/flows.js';

interface CancelledDependent {
  id: number;
  on_parent_failure: OnParentFailure;
  parent: number;
}

export async function reviveDependents(db: Db, retried: readonly number[], now: number): Promise<void> {
  let frontier = [...retried];
  while (frontier.length > 0) {
    const dependents = await rows<CancelledDependent>(db, FLOW_SQL.cancelledDependents, [frontier]);
    if (dependents.length === 0) return;
    const ids = dependents.map((dependent) => dependent.id);
    await rows(db, FLOW_SQL.lockParentsShared, [ids]);
    const parents = await rows<{ job_id: number; id: number; status: JobStatus }>(db, FLOW_SQL.parentsOf, [ids]);
    const revived = dependents.flatMap((dependent) => {
      const pending = revivedState(
        parents.filter((parent) => parent.job_id === dependent.id),
        dependent.on_parent_failure,
      );
      return pending === undefined ? [] : [{ ...dependent, pending }];
    });
    const written = new Set(
      (
        await rows<{ id: number }>(db, FLOW_SQL.revive, [
          revived.map((dependent) => dependent.id),
          revived.map((dependent) => dependent.pending),
        ])
      ).map((row) => row.id),
    );
    const back = revived.filter((dependent) => written.has(dependent.id));
    await record(
      db,
      back.map((dependent) => EVENTS.revived(dependent.id, now, dependent.parent)),
    );
    frontier = back.map((dependent) => dependent.id);
  }
}
