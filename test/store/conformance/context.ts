/**
 * What every part of the Store conformance suite shares: a fresh, empty,
 * migrated store per test (with its clock and a queue over it), and the
 * shorthands the tests use.
 */
import { afterEach, beforeEach } from 'vitest';
import type { EnqueueRequest } from '../../../src/queue/enqueue.js';
import { Queue } from '../../../src/queue/queue.js';
import type { ClaimedJob, RecoverParams, Store } from '../../../src/store/types.js';
import { TestClock } from '../../helpers/clock.js';
import { claimJobs } from '../../helpers/fenced-writes.js';

export const LEASE_MS = 30_000;
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const OWNER_A = 'host-a/child-1';
export const OWNER_B = 'host-a/child-2';

export const SWEEP: Omit<RecoverParams, 'retryDelay'> = {
  errorCode: 'LEASE:EXPIRED',
  errorDetail: 'lease expired',
  event: 'RECOVERED',
  actor: 'sweeper',
};
export const fixedDelay = (ms: number) => () => ms;

/** The test's store, clock and queue (new for each test), and shorthands over them. */
export interface Conformance {
  clock: TestClock;
  store: Store;
  queue: Queue;
  /** Enqueue one `email` job (with the request's overrides); its id. */
  enqueue(request?: Partial<EnqueueRequest>): Promise<number>;
  /** Claim one job for `owner`, or fail the test. */
  claimOne(owner?: string, classes?: string[]): Promise<ClaimedJob>;
  /** A job's timeline, event names only. */
  eventsOf(id: number): Promise<string[]>;
}

/** Registers the per-test store (opened by `openStore`, closed after) and returns the context the suites read it through. */
export function conformanceContext(openStore: (clock: TestClock) => Promise<Store>): Conformance {
  const c = {
    enqueue: async (request: Partial<EnqueueRequest> = {}) =>
      (await c.queue.enqueue({ class: 'email', payload: { n: 1 }, ...request })).id,
    claimOne: async (owner = OWNER_A, classes = ['email']) => {
      const [job] = await claimJobs(c.store, { classes, ownerId: owner, limit: 1, leaseMs: LEASE_MS });
      if (job === undefined) throw new Error('expected a job to claim');
      return job;
    },
    eventsOf: async (id: number) => (await c.store.eventList({ jobId: id })).map((e) => e.event),
  } as Conformance;
  beforeEach(async () => {
    c.clock = new TestClock();
    c.store = await openStore(c.clock);
    c.queue = new Queue(c.store, { clock: c.clock });
  });
  afterEach(async () => {
    await c.store.close();
  });
  return c;
}
