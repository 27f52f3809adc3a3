/**
 * Both drivers' migration 12: flows, keys with a scope and a lifetime, and
 * the outcomes a reader follows (the id column's type is the driver's).
 *
 * - `pending_parents`: a WAITING job's parents that have not ended yet. A
 *   parent's end decrements it under the child's row lock, so of two parents
 *   ending at once exactly one sees it reach zero and queues the child.
 * - `on_parent_failure`: `cancel` (the default) or `run`.
 * - `job_dependencies`: one row per edge, deleted with either job; retention
 *   keeps a parent while a WAITING job still depends on it.
 * - `key_scope` / `key_expires_at`: when a job's idempotency key is free again.
 * - `job_events_outcomes`: the terminal events, in the order a reader of
 *   outcomes follows them.
 */
export const TERMINAL_EVENTS = `event IN ('SUCCEEDED', 'FAILED', 'CANCELLED')`;

export const JOB_STATUS_CHECK = `status IN ('WAITING','QUEUED','CLAIMED','RUNNING','SUCCEEDED','FAILED','CANCELLED')`;

export const flowsMigration = (id: string, time: string) => `
  ALTER TABLE jobs ADD COLUMN pending_parents INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE jobs ADD COLUMN on_parent_failure TEXT NOT NULL DEFAULT 'cancel' CHECK (on_parent_failure IN ('cancel', 'run'));
  ALTER TABLE jobs ADD COLUMN key_scope TEXT NOT NULL DEFAULT 'row' CHECK (key_scope IN ('row', 'incomplete'));
  ALTER TABLE jobs ADD COLUMN key_expires_at ${time};
  CREATE TABLE job_dependencies (
    job_id    ${id} NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    parent_id ${id} NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    PRIMARY KEY (job_id, parent_id)
  );
  -- a parent's end finds its dependents; retention asks whether a waiting job still needs it
  CREATE INDEX job_dependencies_parent ON job_dependencies (parent_id, job_id);
  -- retention's question (does a waiting job need this one?) reads the waiting jobs alone, never a scan of jobs
  CREATE INDEX jobs_waiting ON jobs (id) WHERE status = 'WAITING';
`;
