/**
 * The queue.yaml schema. Every default it fills in comes from
 * src/limits.ts (but null: absent). Objects are strict (an
 * unknown key is a typo, not something to ignore). Each field carries its
 * expectation as its error message, so a bad value reads
 * `classes[1].lease_seconds: expected a number > 0, got "abc"`.
 */
import { z } from 'zod';
import { cronExpressionProblem, isTimeZone } from '../queue/cron.js';
import { serialisePayload } from '../queue/enqueue.js';
import {
  DEFAULT_BACKOFF,
  DEFAULT_CLASS,
  defaultClaimBatch,
  defaultHeartbeatSeconds,
  DEFAULT_HTTP,
  DEFAULT_LOG,
  DEFAULT_MAX_RETRIES,
  DEFAULT_PAYLOAD_LIMIT_BYTES,
  DEFAULT_PRIORITY,
  DEFAULT_RESTART,
  DEFAULT_RESULT_LIMIT_BYTES,
  DEFAULT_RETENTION,
  DEFAULT_SCHEDULE,
  DEFAULT_SHUTDOWN_GRACE_SECONDS,
  DEFAULT_STATEMENT_TIMEOUT_SECONDS,
  DEFAULT_SWEEPER,
  LOG_LEVELS,
  MAX_PRIORITY,
} from '../limits.js';

/** What a schedule does with occurrences missed while no supervisor ran: enqueue the latest one, all of them, or none. */
export const CATCH_UP_MODES = ['latest', 'all', 'none'] as const;

const CLASS_NAME = /^[A-Za-z0-9_.-]+$/;

const mapping = <S extends z.core.$ZodLooseShape>(shape: S) => z.strictObject(shape, { error: 'expected a mapping' });

const positiveNumber = () => {
  const error = 'expected a number > 0';
  return z.number({ error }).positive({ error });
};
/** Durations are seconds, fractions allowed. */
const seconds = positiveNumber;
const count = () => {
  const error = 'expected an integer > 0';
  return z.int({ error }).positive({ error });
};
const nonNegativeCount = () => {
  const error = 'expected an integer >= 0';
  return z.int({ error }).nonnegative({ error });
};
const nonEmptyString = (what: string) => {
  const error = `expected ${what}`;
  return z.string({ error }).min(1, { error });
};
const flag = () => z.boolean({ error: 'expected true or false' });

/**
 * For a cross-field rule: run it only once the object parsed and the fields
 * it relates passed their own checks. A bad value already has its line; a
 * rule fed that value would add a second, derived one.
 */
const whenFieldsValid = (...fields: string[]) => ({
  when: (payload: z.core.ParsePayload) =>
    payload.issues.every((issue) => issue.continue === true && !fields.includes(String(issue.path?.[0]))),
});

const logSchema = mapping({
  level: z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }).default(DEFAULT_LOG.level),
  /** null: stdout only. */
  file: nonEmptyString('a file path or null').nullable().default(null),
  max_size_mb: positiveNumber().default(DEFAULT_LOG.max_size_mb),
  max_files: count().default(DEFAULT_LOG.max_files),
});

const sweeperSchema = mapping({
  interval_seconds: seconds().default(DEFAULT_SWEEPER.interval_seconds),
  batch_size: count().default(DEFAULT_SWEEPER.batch_size),
});

const retentionSchema = mapping({
  succeeded_days: positiveNumber().default(DEFAULT_RETENTION.succeeded_days),
  failed_days: positiveNumber().default(DEFAULT_RETENTION.failed_days),
  cancelled_days: positiveNumber().default(DEFAULT_RETENTION.cancelled_days),
  batch_size: count().default(DEFAULT_RETENTION.batch_size),
  interval_seconds: seconds().default(DEFAULT_RETENTION.interval_seconds),
});

const httpSchema = mapping({
  port: z
    .int({ error: 'expected an integer from 0 to 65535' })
    .min(0, { error: 'expected an integer from 0 to 65535' })
    .max(65535, { error: 'expected an integer from 0 to 65535' }),
  host: nonEmptyString('a host name or address').default(DEFAULT_HTTP.host),
  /** Also serve the web dashboard on this port (on a non-loopback host only with LEASEHOLD_DASHBOARD_TOKEN set). */
  dashboard: flag().default(DEFAULT_HTTP.dashboard),
});

const backoffSchema = mapping({
  base_seconds: seconds().default(DEFAULT_BACKOFF.base_seconds),
  max_seconds: seconds().default(DEFAULT_BACKOFF.max_seconds),
  jitter: flag().default(DEFAULT_BACKOFF.jitter),
});

const restartSchema = mapping({
  /** 0: never restart a crashed child. */
  max_restarts: nonNegativeCount().default(DEFAULT_RESTART.max_restarts),
  within_seconds: seconds().default(DEFAULT_RESTART.within_seconds),
});

/** Part of each occurrence's idempotency key, which is at most 255 characters. */
const SCHEDULE_NAME_MAX = 100;

const scheduleSchema = mapping({
  name: z
    .string({ error: 'expected a schedule name' })
    .regex(CLASS_NAME, { error: 'expected a schedule name of letters, digits, "_", "." or "-"' })
    .max(SCHEDULE_NAME_MAX, { error: `expected a schedule name of at most ${SCHEDULE_NAME_MAX} characters` }),
  cron: nonEmptyString('a cron expression').superRefine((expression, ctx) => {
    const problem = cronExpressionProblem(expression);
    if (problem !== undefined)
      ctx.addIssue({
        code: 'custom',
        message: `expected a cron expression, got ${JSON.stringify(expression)}: ${problem}`,
      });
  }),
  timezone: nonEmptyString('an IANA time zone')
    .default(DEFAULT_SCHEDULE.timezone)
    .superRefine((timezone, ctx) => {
      if (!isTimeZone(timezone))
        ctx.addIssue({
          code: 'custom',
          message: `expected an IANA time zone such as "Europe/Berlin" or "UTC", got ${JSON.stringify(timezone)}`,
        });
    }),
  /** The payload of every job the schedule enqueues. */
  payload: z.json({ error: 'expected a JSON value' }).default(DEFAULT_SCHEDULE.payload),
  catch_up: z
    .enum(CATCH_UP_MODES, { error: `expected one of ${CATCH_UP_MODES.join(', ')}` })
    .default(DEFAULT_SCHEDULE.catch_up),
  priority: z
    .int({ error: `expected an integer from -${MAX_PRIORITY} to ${MAX_PRIORITY}` })
    .min(-MAX_PRIORITY, { error: `expected an integer from -${MAX_PRIORITY} to ${MAX_PRIORITY}` })
    .max(MAX_PRIORITY, { error: `expected an integer from -${MAX_PRIORITY} to ${MAX_PRIORITY}` })
    .default(DEFAULT_PRIORITY),
});

/** At most `max` jobs of the class start (are claimed) in any window of `per_seconds`, across every host sharing the database. */
const rateLimitSchema = mapping({
  max: count(),
  per_seconds: seconds(),
});

/** Middleware module paths (resolved like handler paths), outermost first. */
const middlewareSchema = z
  .array(nonEmptyString('a middleware module path'), { error: 'expected a list of middleware module paths' })
  .default([]);

const classSchema = mapping({
  name: z
    .string({ error: 'expected a class name' })
    .regex(CLASS_NAME, { error: 'expected a class name of letters, digits, "_", "." or "-"' }),
  /** Resolved against the config file's folder by the loader. */
  handler: nonEmptyString('a handler module path'),
  /** Run inside the top-level middleware; the loader prepends those, so a loaded class holds its whole chain. */
  middleware: middlewareSchema,
  processes: count().default(DEFAULT_CLASS.processes),
  /** Jobs one child runs at the same time (for I/O-bound handlers). */
  concurrency: count().default(DEFAULT_CLASS.concurrency),
  lease_seconds: seconds().default(DEFAULT_CLASS.lease_seconds),
  /** Default: defaultHeartbeatSeconds(lease_seconds). */
  heartbeat_seconds: seconds().optional(),
  max_runtime_seconds: seconds().default(DEFAULT_CLASS.max_runtime_seconds),
  kill_grace_seconds: seconds().default(DEFAULT_CLASS.kill_grace_seconds),
  max_retries: nonNegativeCount().default(DEFAULT_MAX_RETRIES),
  backoff: backoffSchema.prefault({}),
  max_memory_mb: positiveNumber().default(DEFAULT_CLASS.max_memory_mb),
  restart: restartSchema.prefault({}),
  /** The most jobs claimed in one transaction; the child starts at 1 and doubles while jobs are fast. Default: defaultClaimBatch(concurrency). */
  claim_batch: count().optional(),
  poll_seconds: seconds().default(DEFAULT_CLASS.poll_seconds),
  /** Cron schedules: each occurrence enqueues one job of this class, once across every supervisor. */
  schedules: z.array(scheduleSchema, { error: 'expected a list of schedules' }).default([]),
  /** Absent: no limit. */
  rate_limit: rateLimitSchema.optional(),
})
  .superRefine((cls, ctx) => {
    const seen = new Map<string, number>();
    cls.schedules.forEach((schedule, index) => {
      const first = seen.get(schedule.name);
      if (first === undefined) seen.set(schedule.name, index);
      else
        ctx.addIssue({
          code: 'custom',
          path: ['schedules', index, 'name'],
          message: `duplicate schedule name "${schedule.name}" (also schedules[${first}].name)`,
        });
    });
  })
  .superRefine(
    (cls, ctx) => {
      // A heartbeat must fit at least twice in the lease, so one late beat does not lose the job.
      if (cls.heartbeat_seconds !== undefined && cls.heartbeat_seconds > cls.lease_seconds / 2) {
        ctx.addIssue({
          code: 'custom',
          path: ['heartbeat_seconds'],
          message: `expected at most lease_seconds / 2 = ${cls.lease_seconds / 2} (heartbeat well under the lease), got ${cls.heartbeat_seconds}`,
        });
      }
    },
    whenFieldsValid('lease_seconds', 'heartbeat_seconds'),
  )
  .superRefine((cls, ctx) => {
    if (cls.backoff.max_seconds < cls.backoff.base_seconds) {
      ctx.addIssue({
        code: 'custom',
        path: ['backoff', 'max_seconds'],
        message: `expected at least backoff.base_seconds = ${cls.backoff.base_seconds}, got ${cls.backoff.max_seconds}`,
      });
    }
  }, whenFieldsValid('backoff'))
  .transform((cls) => ({
    ...cls,
    heartbeat_seconds: cls.heartbeat_seconds ?? defaultHeartbeatSeconds(cls.lease_seconds),
    claim_batch: cls.claim_batch ?? defaultClaimBatch(cls.concurrency),
  }));

/** A host identity: no whitespace, ":" or "/" (they separate the parts of supervisor and worker ids). */
export const HOST_IDENTITY = /^[^\s:/]{1,255}$/;
const HOST_EXPECTED = 'expected a host name without whitespace, ":" or "/"';

export const configSchema = mapping({
  /** A SQLite path (resolved by the loader) or a postgres:// URL. */
  database: nonEmptyString('a SQLite file path or a postgres:// URL'),
  /** This supervisor's host identity; null: LEASEHOLD_HOST, else os.hostname() (applied by the supervise CLI). */
  host: z.string({ error: HOST_EXPECTED }).regex(HOST_IDENTITY, { error: HOST_EXPECTED }).nullable().default(null),
  log: logSchema.prefault({}),
  sweeper: sweeperSchema.prefault({}),
  retention: retentionSchema.prefault({}),
  /** Absent or null: no HTTP server. */
  http: httpSchema.nullable().default(null),
  shutdown_grace_seconds: seconds().default(DEFAULT_SHUTDOWN_GRACE_SECONDS),
  /** PostgreSQL: the bound on every statement of every connection leasehold opens (SQLite: unused). */
  statement_timeout_seconds: seconds().default(DEFAULT_STATEMENT_TIMEOUT_SECONDS),
  payload_limit_bytes: count().default(DEFAULT_PAYLOAD_LIMIT_BYTES),
  result_limit_bytes: count().default(DEFAULT_RESULT_LIMIT_BYTES),
  /** Around every class's handler, outside the class's own middleware. */
  middleware: middlewareSchema,
  classes: z
    .array(classSchema, { error: 'expected a list of classes' })
    .min(1, { error: 'expected at least one class' }),
})
  .superRefine(
    (config, ctx) => {
      // Runs even when other fields failed, so a duplicate is reported with the rest.
      const classes: unknown = (config as { classes?: unknown }).classes;
      if (!Array.isArray(classes)) return;
      const firstIndex = new Map<string, number>();
      classes.forEach((cls: unknown, index) => {
        const name = (cls as { name?: unknown } | null)?.name;
        if (typeof name !== 'string') return;
        const first = firstIndex.get(name);
        if (first === undefined) {
          firstIndex.set(name, index);
          return;
        }
        ctx.addIssue({
          code: 'custom',
          path: ['classes', index, 'name'],
          message: `duplicate class name "${name}" (also classes[${first}].name)`,
        });
      });
    },
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
  )
  .superRefine((config, ctx) => {
    config.classes.forEach((cls, classIndex) =>
      cls.schedules.forEach((schedule, index) => {
        try {
          serialisePayload(schedule.payload, config.payload_limit_bytes);
        } catch (error) {
          ctx.addIssue({
            code: 'custom',
            path: ['classes', classIndex, 'schedules', index, 'payload'],
            message: (error as Error).message,
          });
        }
      }),
    );
  });

export type ParsedConfig = z.output<typeof configSchema>;

/** queue.yaml's content as an object: what startSupervisor takes instead of a path. */
export type ConfigObject = z.input<typeof configSchema>;

/**
 * The validated configuration: what `loadConfig` returns, frozen. Durations
 * are seconds (fractional allowed), as in queue.yaml; `file` is the config
 * file it came from, and the paths in it are absolute (resolved against its
 * folder).
 */
export type LeaseholdConfig = Readonly<
  Omit<ParsedConfig, 'classes'> & {
    file: string;
    classes: readonly ClassConfig[];
    /** A config given as an object (startSupervisor): that object, which a reload checks again. */
    source?: ConfigObject;
  }
>;
export type ClassConfig = Readonly<ParsedConfig['classes'][number]>;
export type RestartConfig = ClassConfig['restart'];
export type ScheduleConfig = ClassConfig['schedules'][number];
export type CatchUpMode = (typeof CATCH_UP_MODES)[number];
