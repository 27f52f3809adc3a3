/** What the operator's reads return (the OperatorStore's and SupervisorStore's answers). */
import type { AttemptStatus, JobStatus } from './data.js';

/** A paused class as the reports show it. */
export interface ClassPause {
  class: string;
  paused_at: number;
  paused_by: string | null;
}

/** A class's control row: paused while `paused_at` is set; the last pause and resume, with their actors. */
export interface ClassControl {
  class: string;
  paused_at: number | null;
  paused_by: string | null;
  resumed_at: number | null;
  resumed_by: string | null;
}

/** A rate-limited class's window: starts granted in the last `perMs`, whether jobs are due, and when the next start is allowed. */
export interface RateWindow {
  started: number;
  due: boolean;
  /** With the window full: when its oldest counted start leaves it; null while there is room. */
  next_start_at: number | null;
}

/** A class with jobs due now (QUEUED, run_at passed) and the run_at of the one that has waited longest. */
export interface ClassOldestDue {
  class: string;
  run_at: number;
}

export interface ClassStatusCount {
  class: string;
  status: JobStatus;
  count: number;
}

export interface StatusCount {
  status: JobStatus;
  count: number;
}

/** A held job as `stats` shows it: who holds it and since when. `pid` is null when the owner is not in the registry. */
export interface InFlightJob {
  id: number;
  class: string;
  status: 'CLAIMED' | 'RUNNING';
  owner_id: string | null;
  pid: number | null;
  attempts: number;
  claimed_at: number | null;
  started_at: number | null;
  heartbeat_at: number | null;
  lease_expires_at: number | null;
  cancel_requested_at: number | null;
}

/** `jobs` jobs of a class ended `status` after `attempts` attempts (claims handed back at shutdown not counted). */
export interface RetryBucket {
  class: string;
  status: 'SUCCEEDED' | 'FAILED';
  attempts: number;
  jobs: number;
}

export interface ErrorCount {
  code: string;
  count: number;
  /** When the last attempt with this code ended. */
  last_at: number;
}

export interface ClassErrorCount extends ErrorCount {
  class: string;
}

export interface DatabaseSize {
  bytes: number;
  pageCount: number;
  pageSize: number;
  /** Pages free for reuse (deleted rows) inside the file. */
  freePages: number;
}

/** What a class's measured attempts in a window cost: how many, their CPU (total and mean), and the highest peak RSS among them. */
export interface ClassCost {
  class: string;
  attempts: number;
  cpu_ms: number;
  mean_cpu_ms: number;
  max_peak_rss_bytes: number;
}

/** One measured attempt, as the cost rankings list it. */
export interface AttemptCostRow {
  job_id: number;
  attempt: number;
  class: string;
  status: AttemptStatus;
  cpu_ms: number;
  peak_rss_bytes: number;
  finished_at: number;
}

/** statsCost's answer: classes by CPU spent, and the attempts that used the most CPU and the most memory. */
export interface CostRanking {
  by_class: ClassCost[];
  top_cpu: AttemptCostRow[];
  top_rss: AttemptCostRow[];
}

/** Jobs that reached SUCCEEDED or FAILED within one minute (`minute`: its start, epoch ms). */
export interface FinishedMinute {
  minute: number;
  status: 'SUCCEEDED' | 'FAILED';
  count: number;
}

/** A class a live supervisor has stopped spawning children for, and why (its host from the workers registry). */
export interface DisabledClass {
  class: string;
  supervisor_id: string;
  host: string;
  reason: string;
  disabled_at: number;
}

/** A child of a live supervisor that ended abnormally: a non-zero exit code or a signal (a crash, or a kill by its supervisor). */
export interface ChildCrash {
  id: string;
  class: string;
  supervisor_id: string;
  exited_at: number;
  exit_code: number | null;
  exit_signal: string | null;
}
