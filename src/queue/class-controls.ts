/** Pause and rate limits: a class's `rate_limit` as the store takes it, and what the store's rows mean for the reports (`stats`, `workers`, /metrics). */
import type { ClassConfig } from '../config/schema.js';
import type {
  ClassControl,
  ClassPause,
  OperatorStore,
  RateLimit,
  RateWindow,
  SupervisorStore,
} from '../store/types.js';

/** The classes paused now, by name. */
export async function pausedClasses(
  store: Pick<OperatorStore | SupervisorStore, 'classControlList'>,
): Promise<ClassPause[]> {
  return (await store.classControlList()).flatMap((row: ClassControl) =>
    row.paused_at === null ? [] : [{ class: row.class, paused_at: row.paused_at, paused_by: row.paused_by }],
  );
}

export function classRateLimit(cls: Pick<ClassConfig, 'rate_limit'>): RateLimit | undefined {
  return cls.rate_limit === undefined
    ? undefined
    : { max: cls.rate_limit.max, perMs: cls.rate_limit.per_seconds * 1000 };
}

/** The rate-limited classes of a config, by name. */
export function rateLimitsByClass(classes: readonly ClassConfig[]): Map<string, RateLimit> {
  return new Map(
    classes.flatMap((cls) => {
      const rateLimit = classRateLimit(cls);
      return rateLimit === undefined ? [] : [[cls.name, rateLimit] as const];
    }),
  );
}

/** Waiting: jobs are due and the window is full, so the next start waits for a start to leave it. */
export function rateLimitWaiting(window: RateWindow): boolean {
  return window.due && window.next_start_at !== null;
}
