/** The worker registry as `leasehold workers` shows it: each row, and what it means now. */
import { isAbnormalExit } from '../crash-loop.js';
import { STALE_SUPERVISOR_MS } from '../queue/registry.js';
import type { WorkerRow } from '../store/types.js';

/** A row of `leasehold workers`: the registry row, and what it means now. */
export interface WorkerView {
  id: string;
  kind: WorkerRow['kind'];
  host: string;
  supervisor_id: string | null;
  pid: number;
  class: string | null;
  state: WorkerRow['state'];
  /** Not recorded as exited, but its supervisor has stopped refreshing the registry: gone or stuck. */
  stale: boolean;
  job_id: number | null;
  cpu_percent: number | null;
  memory_bytes: number | null;
  restarts: number;
  started_at: number;
  heartbeat_at: number;
  exited_at: number | null;
  exit_code: number | null;
  exit_signal: string | null;
  uptime_ms: number;
  heartbeat_age_ms: number;
}

/**
 * A supervisor is stale when its own heartbeat is older than
 * STALE_SUPERVISOR_MS; a child is stale when its supervisor is stale or has
 * exited while the child's row says it still runs.
 */
export function describeWorkers(rows: readonly WorkerRow[], now: number): WorkerView[] {
  const supervisors = new Map(rows.filter((row) => row.kind === 'supervisor').map((row) => [row.id, row]));
  const supervisorStale = (row: WorkerRow) => row.exited_at === null && now - row.heartbeat_at > STALE_SUPERVISOR_MS;
  return rows.map((row) => {
    let stale = false;
    if (row.exited_at === null) {
      if (row.kind === 'supervisor') stale = supervisorStale(row);
      else {
        const parent = row.supervisor_id === null ? undefined : supervisors.get(row.supervisor_id);
        stale = parent !== undefined && (parent.exited_at !== null || supervisorStale(parent));
      }
    }
    return {
      id: row.id,
      kind: row.kind,
      host: row.host,
      supervisor_id: row.supervisor_id,
      pid: row.pid,
      class: row.class,
      state: row.state,
      stale,
      job_id: row.job_id,
      cpu_percent: row.cpu_percent,
      memory_bytes: row.memory_bytes,
      restarts: row.restarts,
      started_at: row.started_at,
      heartbeat_at: row.heartbeat_at,
      exited_at: row.exited_at,
      exit_code: row.exit_code,
      exit_signal: row.exit_signal,
      uptime_ms: (row.exited_at ?? now) - row.started_at,
      heartbeat_age_ms: now - row.heartbeat_at,
    };
  });
}

/** How a worker ended, in a word, told apart from its row: the supervisor records its own kills as state `killed` (a child it stops with SIGTERM exits 0). */
export type WorkerEnding = 'stopped' | 'killed' | 'crashed' | 'failed to start' | 'gone';

/** Signals that stop a process from outside (a supervisor's kill, an operator, the OOM killer, a closed terminal); any other is the process's own fault. */
const KILL_SIGNALS: ReadonlySet<string> = new Set(['SIGKILL', 'SIGTERM', 'SIGINT', 'SIGHUP']);
/** 128 + SIGKILL and 128 + SIGTERM, as a shell between reports a kill. */
const KILLED_CODES: ReadonlySet<number> = new Set([137, 143]);

/** Null while it runs. A recorded exit with neither code nor signal is one a later supervisor found: it was not seen. */
export function workerEnding(
  w: Pick<WorkerRow, 'state' | 'exited_at' | 'exit_code' | 'exit_signal'>,
): WorkerEnding | null {
  if (w.exited_at === null) return null;
  if (w.state === 'failed') return 'failed to start';
  if (w.state === 'killed') return 'killed';
  if (w.exit_signal !== null) return KILL_SIGNALS.has(w.exit_signal) ? 'killed' : 'crashed';
  if (w.exit_code === null) return 'gone';
  if (!isAbnormalExit(w.exit_code)) return 'stopped';
  return KILLED_CODES.has(w.exit_code) ? 'killed' : 'crashed';
}
