/**
 * Enqueue requests typed by the job registry (../job-types.ts): the class
 * and its payload checked at compile time.
 */
import type { JobClass, PayloadOf } from '../job-types.js';
import type { EnqueueRequest } from './enqueue.js';

/** The payload is optional when its type admits undefined (always, untyped). */
type PayloadField<C> = undefined extends PayloadOf<C> ? { payload?: PayloadOf<C> } : { payload: PayloadOf<C> };

/**
 * An enqueue request for class C: the class and its payload typed, the other fields as EnqueueRequest has them.
 * Over a union of classes it is a union discriminated by `class`.
 */
export type EnqueueRequestOf<C extends JobClass = JobClass> = C extends unknown
  ? Omit<EnqueueRequest, 'class' | 'payload'> & { class: C } & PayloadField<C>
  : never;
