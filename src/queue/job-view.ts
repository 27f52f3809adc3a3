import type { JobRow } from '../store/types.js';
import type { JobClass, PayloadOf, ResultOf } from '../job-types.js';

/**
 * A job's row with its JSON columns parsed: payload, and result and progress (null when none), typed from the
 * Jobs registry: over a union of classes, a union discriminated by `class`.
 */
export type JobView<C extends JobClass = JobClass> = C extends unknown
  ? Omit<JobRow, 'class' | 'payload' | 'result' | 'progress'> & {
      class: C;
      payload: PayloadOf<C>;
      result: ResultOf<C> | null;
      progress: unknown;
    }
  : never;

const parsed = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

/** Every stored JSON column was written as JSON (enqueue checks payloads, a worker stringifies results and progress). */
export function jobView(job: JobRow): JobView {
  return { ...job, payload: parsed(job.payload), result: parsed(job.result), progress: parsed(job.progress) };
}
