/**
 * A job's place in a flow, as `leasehold show` prints it and the dashboard's
 * job page shows it: the jobs it waits or waited for, and the first
 * CHILDREN_SHOWN of those that wait or waited for it, with how many more
 * there are (counted only when there are more).
 */
import type { JobRow, JobStatus, OperatorStore, RelatedJob } from '../store/types.js';

export const CHILDREN_SHOWN = 50;

/** A parent or a child as the reports show it: its results stay on its own page. */
export interface FlowJob {
  id: number;
  class: string;
  status: JobStatus;
  error_code: string | null;
}

export interface JobFlow {
  parents: FlowJob[];
  /** The first CHILDREN_SHOWN, by id. */
  children: FlowJob[];
  /** Children past those. */
  more_children: number;
}

export type FlowStore = Pick<OperatorStore, 'jobParents' | 'jobChildren' | 'jobChildCount'>;

export async function jobFlow(store: FlowStore, id: number): Promise<JobFlow> {
  const [parents, children] = await Promise.all([
    store.jobParents({ id }),
    store.jobChildren({ id, limit: CHILDREN_SHOWN + 1 }),
  ]);
  const more = children.length > CHILDREN_SHOWN ? (await store.jobChildCount({ id })) - CHILDREN_SHOWN : 0;
  return {
    parents: parents.map(flowJob),
    children: children.slice(0, CHILDREN_SHOWN).map(flowJob),
    more_children: more,
  };
}

function flowJob(job: RelatedJob): FlowJob {
  return { id: job.id, class: job.class, status: job.status, error_code: job.error_code };
}

/** What a parent that fails does to a job (its on_parent_failure), in words. */
export function onParentFailureText(job: Pick<JobRow, 'on_parent_failure'>): string {
  return job.on_parent_failure === 'run'
    ? 'it runs even if one ends FAILED or CANCELLED'
    : 'it is cancelled if one ends FAILED or CANCELLED';
}

/** The line under a job's children when there are more than shown. */
export function moreChildrenLine(flow: JobFlow): string | undefined {
  return flow.more_children > 0 ? `… and ${flow.more_children} more` : undefined;
}
