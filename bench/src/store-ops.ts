/** The worker's two store writes, one job at a time, as the store-level benchmarks time them. */
import { DEFAULT_MAX_RETRIES } from '../../dist/src/limits.js';
import type { ClaimedJob, ClaimRequest, WorkerStore } from '../../dist/src/store/types.js';

/** A claim for a class of the schema's default max_retries. */
export function benchClaim(request: Omit<ClaimRequest, 'classMaxRetries'>): ClaimRequest {
  return { ...request, classMaxRetries: DEFAULT_MAX_RETRIES };
}

/** A claim on its own: a settle with nothing to settle. */
export async function claim(store: WorkerStore, request: Omit<ClaimRequest, 'classMaxRetries'>): Promise<ClaimedJob[]> {
  return (await store.jobsSettle({ settlements: [], claim: benchClaim(request) })).claimed;
}

/** One job's success on its own, fenced by its lease; a lost lease is an error here. */
export async function complete(store: WorkerStore, job: ClaimedJob): Promise<void> {
  const [settled] = (
    await store.jobsSettle({
      settlements: [{ ...job, startedAt: null, verdict: { type: 'complete', result: null }, claim: job }],
    })
  ).settled;
  if (settled?.held !== true) throw new Error(`job ${job.id}: lease lost`);
}
