/**
 * One numbered schema step of a driver; append-only, never edited once
 * shipped: shipped-migrations.json holds each step's hash, and the text shared
 * below is part of the steps that use it (docs/reference/migrations.md).
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The statuses of a job someone holds: partial indexes of both drivers cover them. */
export const IN_FLIGHT = `status IN ('CLAIMED', 'RUNNING')`;

/** A job some WAITING job still depends on (through job_dependencies_parent): retention keeps it. */
export const NEEDED_BY_WAITING = `EXISTS (SELECT 1 FROM job_dependencies AS d JOIN jobs AS c ON c.id = d.job_id
  WHERE d.parent_id = jobs.id AND c.status = 'WAITING')`;

/**
 * Both drivers' migration 3. Claims, starts and heartbeats no longer move
 * the retention index: only finished rows live in it (finished_at is set
 * exactly when a job ends; `IS NOT NULL`, not a three-value IN, which SQLite
 * evaluates through a temporary table for every row it writes). The lists
 * by status and by class go through jobs_class_status, one seek per class or
 * per status, instead of two more indexes that moved with every status change.
 */
export const JOBS_INDEXES_V3 = `
  DROP INDEX jobs_status_finished;
  CREATE INDEX jobs_finished ON jobs (status, finished_at) WHERE finished_at IS NOT NULL;
  DROP INDEX jobs_status_id;
  DROP INDEX jobs_class_id;
`;

/**
 * Both drivers' migration 4 (the id column's type is the driver's). A class's
 * control row: paused while paused_at is set (the claim reads it by key); the
 * last pause and resume stay recorded with their actor. PostgreSQL locks it to
 * serialize a rate-limited class's claims. class_starts: one row per claim
 * granted to a rate-limited class, counted over its window through
 * class_starts_window and pruned as it ages out.
 */
export const classControlsMigration = (id: string) => `
  CREATE TABLE class_controls (
    class      TEXT   PRIMARY KEY,
    paused_at  BIGINT,
    paused_by  TEXT,
    resumed_at BIGINT,
    resumed_by TEXT
  );
  CREATE TABLE class_starts (
    id         ${id},
    class      TEXT   NOT NULL,
    claimed_at BIGINT NOT NULL
  );
  CREATE INDEX class_starts_window ON class_starts (class, claimed_at);
`;

/**
 * Both drivers' migration 5 (`time` is each driver's epoch-ms integer type):
 * one row per schedule (class, name), which supervisors advance by
 * compare-and-set. last_job_id has no foreign key: retention may delete the job.
 */
export const schedulesTable = (time: string) => `
  CREATE TABLE schedules (
    class           TEXT   NOT NULL,
    name            TEXT   NOT NULL,
    checked_through ${time} NOT NULL,
    last_run_at     ${time},
    last_job_id     ${time},
    updated_at      ${time} NOT NULL,
    updated_by      TEXT   NOT NULL,
    PRIMARY KEY (class, name)
  );
`;

/**
 * Both drivers' migration 6 (`real` and `integer` are the driver's types):
 * what each attempt cost its child (AttemptCost), written by the statement
 * that ends the attempt. No index: the cost rankings find a window's
 * attempts through the indexes that exist (see the drivers' stats SQL); one
 * on job_attempts (finished_at) would cost every settle transaction more WAL
 * pages, and the children more CPU per job, on the path every job takes, for
 * reads that the existing indexes already serve.
 */
export const attemptCostMigration = (real: string, integer: string) => `
  ALTER TABLE job_attempts ADD COLUMN cpu_ms ${real};
  ALTER TABLE job_attempts ADD COLUMN peak_rss_bytes ${integer};
`;

/**
 * Both drivers' migration 7 (the dashboard; `time` is each driver's epoch-ms
 * integer type). jobs_failed: the dead letter by class and error code, for
 * the jobs page's error-code filter, the bulk retry and its count; only
 * FAILED rows live in it, so a claim, a heartbeat or a success never writes
 * to it. workers_exited: children's recent exits (the crash-loop rule).
 * disabled_classes: a class a supervisor stopped spawning (a handler that
 * cannot start, a crash loop), until a reload enables it or that supervisor
 * exits; a dashboard on another host reads it.
 */
export const dashboardMigration = (time: string) => `
  CREATE INDEX jobs_failed ON jobs (class, error_code, id) WHERE status = 'FAILED';
  CREATE INDEX workers_exited ON workers (exited_at) WHERE kind = 'child';
  CREATE TABLE disabled_classes (
    supervisor_id TEXT   NOT NULL,
    class         TEXT   NOT NULL,
    reason        TEXT   NOT NULL,
    disabled_at   ${time} NOT NULL,
    PRIMARY KEY (supervisor_id, class)
  );
`;

/**
 * Both drivers' migration 8: 1 marks a job whose enqueue set no max_retries,
 * so each claim writes the claiming child's class value into max_retries
 * (a producer need not know the supervisors' config). Existing rows keep
 * what they were enqueued with (0). An integer, not a boolean, so that both
 * drivers return the same value; no CHECK, which would read every existing
 * row under the table's lock: only the store's statements write it.
 */
export const MAX_RETRIES_FROM_CLASS = `
  ALTER TABLE jobs ADD COLUMN max_retries_from_class INTEGER NOT NULL DEFAULT 0;
`;

/**
 * Both drivers' migration 9 (`id` and `time`: each driver's job-id and
 * epoch-ms integer types): why an attempt failed, in full (the thrown
 * error's stack and cause chain, or a dead child's last words), and a job's
 * own log lines per attempt. One row per line, keyed by (job, attempt, seq):
 * `logs <id>` reads them in order through the key, and deleting a job takes
 * them with it. Both are written only by attempts that have them, so a job
 * that neither fails nor logs writes nothing more.
 */
export const failureDetailMigration = (id: string, time: string) => `
  ALTER TABLE job_attempts ADD COLUMN error_stack TEXT;
  CREATE TABLE job_logs (
    job_id  ${id}   NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    seq     INTEGER NOT NULL,
    ts      ${time}  NOT NULL,
    level   TEXT    NOT NULL,
    message TEXT    NOT NULL,
    fields  TEXT,
    PRIMARY KEY (job_id, attempt, seq)
  );
`;

/**
 * What every claim statement of both drivers writes into max_retries, given
 * the claimer's class value: the claim is when the job meets a config, and
 * writing it there lets every later decision (its worker's, a supervisor's
 * take-back, any host's sweeper) and `show` read one concrete value. A CASE
 * on the row it updates anyway: no read, no round trip.
 */
export const CLAIM_MAX_RETRIES = (classMaxRetries: string) =>
  `CASE WHEN max_retries_from_class = 1 THEN ${classMaxRetries} ELSE max_retries END`;

/**
 * Both drivers' migration 10 (`big`, `real`: each driver's 64-bit integer
 * and floating types): the stats rollup (../store/stats-window.ts). One row says
 * which minutes are summed; per minute, the jobs that finished (by class,
 * status and attempts spent), what their measured attempts cost by class,
 * and the costliest attempts. Keyed by minute first: reads take a range.
 */
export const statsRollupMigration = (big: string, real: string) => `
  CREATE TABLE stats_rollup (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    rolled_from  ${big},
    rolled_until ${big}
  );
  INSERT INTO stats_rollup (id, rolled_from, rolled_until) VALUES (1, NULL, NULL);
  CREATE TABLE job_end_minutes (
    minute ${big}  NOT NULL,
    class  TEXT    NOT NULL,
    status TEXT    NOT NULL,
    spent  INTEGER NOT NULL,
    jobs   INTEGER NOT NULL,
    PRIMARY KEY (minute, class, status, spent)
  );
  CREATE TABLE attempt_cost_minutes (
    minute             ${big}  NOT NULL,
    class              TEXT    NOT NULL,
    attempts           INTEGER NOT NULL,
    cpu_ms             ${real}  NOT NULL,
    max_peak_rss_bytes ${big},
    PRIMARY KEY (minute, class)
  );
  CREATE TABLE attempt_cost_top (
    minute         ${big}  NOT NULL,
    job_id         ${big}  NOT NULL,
    attempt        INTEGER NOT NULL,
    class          TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    cpu_ms         ${real}  NOT NULL,
    peak_rss_bytes ${big},
    finished_at    ${big}  NOT NULL,
    PRIMARY KEY (minute, job_id, attempt)
  );
`;

/**
 * Both drivers' migration 14: the W3C trace context a job was enqueued in
 * (its `traceparent`, then a space and its `tracestate` when it has one),
 * which each attempt's span takes as its parent. NULL: enqueued outside a trace.
 */
export const TRACEPARENT_COLUMN = `ALTER TABLE jobs ADD COLUMN traceparent TEXT;`;
