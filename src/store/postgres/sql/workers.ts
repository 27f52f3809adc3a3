import { nameAll } from '../connection.js';
import { CLEAN_EXIT_CODE } from '../../../crash-loop.js';

const WORKER_COLUMNS = `id, kind, host, supervisor_id, pid, class, state, started_at, heartbeat_at, exited_at, exit_code, exit_signal, restarts,
  cpu_percent, memory_bytes, job_id`;

/**
 * An abnormal exit of the worker row `alias` names ('' or 'c.'): any code but the clean one, or none (a signal,
 * or found gone). isAbnormalExit in ../../../crash-loop.ts is the same rule in TypeScript.
 */
export const ABNORMAL_EXIT = (alias: string) =>
  `(${alias}exit_code IS NULL OR ${alias}exit_code <> ${CLEAN_EXIT_CODE})`;

/** Statements on the worker registry. */
export const WORKER_SQL = nameAll('workers', {
  /** (id, kind, host, supervisorId, pid, class, state, restarts, now) */
  insert: `INSERT INTO workers (id, kind, host, supervisor_id, pid, class, state, started_at, heartbeat_at, restarts)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $9, $9, $8)`,
  /** (id, now, state, cpu, memory, jobKnown, jobId; each null to keep it); no row: unknown or exited. */
  heartbeat: `UPDATE workers SET heartbeat_at = $2, state = coalesce($3, state), cpu_percent = coalesce($4, cpu_percent),
      memory_bytes = coalesce($5, memory_bytes), job_id = CASE WHEN $6::boolean THEN $7::bigint ELSE job_id END
    WHERE id = $1 AND exited_at IS NULL`,
  /** (id, state, exitCode, exitSignal, now) */
  exit: `UPDATE workers SET state = $2, exited_at = $5, exit_code = $3, exit_signal = $4, job_id = NULL
    WHERE id = $1 AND exited_at IS NULL`,
  /** (limit) newest first, through workers_started. */
  listAll: `SELECT ${WORKER_COLUMNS} FROM workers ORDER BY started_at DESC LIMIT $1`,
  /** (limit) workers not known to have exited. */
  listLive: `SELECT ${WORKER_COLUMNS} FROM workers WHERE exited_at IS NULL ORDER BY started_at DESC LIMIT $1`,
  /**
   * (since, liveSince, limit) -> children that ended abnormally (a non-zero code or a signal) since then, newest
   * first, through workers_exited; only those of supervisors alive (not exited, heartbeat since liveSince), by key.
   */
  crashes: `SELECT c.id, c.class, c.supervisor_id, c.exited_at, c.exit_code, c.exit_signal
    FROM workers AS c JOIN workers AS s ON s.id = c.supervisor_id
    WHERE c.kind = 'child' AND c.exited_at >= $1 AND ${ABNORMAL_EXIT('c.')}
      AND s.exited_at IS NULL AND s.heartbeat_at >= $2
    ORDER BY c.exited_at DESC LIMIT $3`,
  /**
   * (class) -> a row if a child of the class was ever registered, on any host. No index of its own: the
   * library asks once per class per process, and the registry holds a row per child started.
   */
  classServed: `SELECT 1 AS served FROM workers WHERE kind = 'child' AND class = $1 LIMIT 1`,
  /** (limit) -> the classes any child was ever registered with, by name; asked only of a class never served, as above. */
  servedClasses: `SELECT DISTINCT class FROM workers WHERE kind = 'child' AND class IS NOT NULL ORDER BY class LIMIT $1`,
  /** (host) workers recorded alive on a host, through workers_live. */
  liveOnHost: `SELECT ${WORKER_COLUMNS} FROM workers WHERE host = $1 AND exited_at IS NULL`,
});
