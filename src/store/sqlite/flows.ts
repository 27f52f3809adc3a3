/**
 * The SQLite driver's side of ../flow-rules.ts. SQLite runs one write
 * transaction at a time, so reading a parent and counting a dependent down
 * need no lock of their own: the transaction that ends a parent sees every
 * edge committed before it, and a dependent's enqueue sees every end.
 */
import { InvalidInputError } from '../../errors.js';
import { bornState, dependentFate, revivedState, type BornState, type ParentState } from '../flow-rules.js';
import { EVENTS, type PlannedEvent } from '../timeline.js';
import type { InsertedJob, NewJob, OnParentFailure, TerminalStatus } from '../types.js';
import type { FlowStatements } from './sql/flows.js';

/** A job an outcome or an operator just ended. */
export interface EndedJob {
  id: number;
  status: TerminalStatus;
}

/**
 * Inside the transaction that ended `ended`: each WAITING dependent is
 * cancelled or counted down (queued at zero), and a cancelled one ends in
 * turn, down the chain.
 */
export function settleDependents(
  flows: FlowStatements,
  ended: readonly EndedJob[],
  now: number,
  record: (event: PlannedEvent) => void,
): void {
  downTheChain(ended, (parent) => {
    const next: EndedJob[] = [];
    const dependents = flows.waitingDependents.all(parent.id) as { id: number; on_parent_failure: OnParentFailure }[];
    for (const dependent of dependents) {
      const fate = dependentFate(parent.id, parent.status, dependent.on_parent_failure);
      if (fate.type === 'cancel') {
        if (flows.cancelDependent.run({ id: dependent.id, now, code: fate.code, detail: fate.detail }).changes === 0)
          continue;
        record(EVENTS.dependencyCancelled(dependent.id, now, fate.code, parent.id));
        next.push({ id: dependent.id, status: 'CANCELLED' });
      } else if (
        (flows.countDown.get({ id: dependent.id, now }) as { status: string } | undefined)?.status === 'QUEUED'
      )
        record(EVENTS.dependenciesMet(dependent.id, now, parent.id));
    }
    return next;
  });
}

/**
 * Inside the transaction that retried `retried`: each dependent their
 * failure cancelled is WAITING again when no other parent stands failed or
 * cancelled, and its own cancelled dependents in turn, down the chain.
 */
export function reviveDependents(
  flows: FlowStatements,
  retried: readonly number[],
  now: number,
  record: (event: PlannedEvent) => void,
): void {
  downTheChain(retried, (parent) => {
    const next: number[] = [];
    const dependents = flows.cancelledDependents.all(parent) as { id: number; on_parent_failure: OnParentFailure }[];
    for (const dependent of dependents) {
      const pending = revivedState(flows.parentsOf.all(dependent.id) as ParentState[], dependent.on_parent_failure);
      if (pending === undefined || flows.reviveDependent.run({ id: dependent.id, pending }).changes === 0) continue;
      record(EVENTS.revived(dependent.id, now, parent));
      next.push(dependent.id);
    }
    return next;
  });
}

/** Visit `start`, then what each visit returned, level by level, until a level returns nothing. */
function downTheChain<T>(start: readonly T[], visit: (job: T) => T[]): void {
  for (let level = start; level.length > 0;) level = level.flatMap(visit);
}

/** The parents of a job about to be inserted: those named by id, and earlier jobs of its batch (already inserted). */
export function parentIdsOf(job: NewJob, earlier: readonly InsertedJob[]): number[] {
  const ids = new Set(job.parentIds ?? []);
  for (const at of job.parentIndexes ?? []) ids.add(earlier[at]!.id);
  return [...ids].sort((a, b) => a - b);
}

/** Where a job with these parents starts; a parent that does not exist is refused. */
export function bornWith(flows: FlowStatements, parentIds: readonly number[], job: NewJob): BornState {
  if (parentIds.length === 0) return { status: 'QUEUED' };
  const parents = flows.parents.all(JSON.stringify(parentIds)) as ParentState[];
  if (parents.length < parentIds.length) {
    const missing = parentIds.find((id) => !parents.some((p) => p.id === id));
    throw new InvalidInputError('DEPENDS_ON', `job ${missing} does not exist`);
  }
  return bornState(parents, job.onParentFailure ?? 'cancel');
}
