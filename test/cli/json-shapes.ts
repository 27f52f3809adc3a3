/** The --json shapes of `leasehold` commands, as the CLI tests read them. */
export interface JobJson {
  id: number;
  class: string;
  status: string;
  attempts: number;
  payload: unknown;
  result: unknown;
  owner_id: string | null;
  error_code: string | null;
  [key: string]: unknown;
}
export interface ShowJson {
  job: JobJson;
  attempts: { attempt: number; status: string; owner_id: string; error_code: string | null }[];
  events: { event: string; ts: number; actor: string; detail: unknown }[];
}
export interface WorkerJson {
  id: string;
  kind: string;
  pid: number;
  class: string | null;
  state: string;
  stale: boolean;
  job_id: number | null;
  supervisor_id: string | null;
  exited_at: number | null;
  uptime_ms: number;
  heartbeat_at: number;
  heartbeat_age_ms: number;
  memory_bytes: number | null;
  restarts: number;
}
export interface WorkersJson {
  now: number;
  stale_after_ms: number;
  workers: WorkerJson[];
}
export type Counts = Record<
  'WAITING' | 'QUEUED' | 'CLAIMED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED' | 'total',
  number
>;
export interface StatsJson {
  now: number;
  window_ms: number;
  jobs: { by_class: (Counts & { class: string })[]; total: Counts };
  queues: { class: string; oldest_age_seconds: number; unserved: boolean }[];
  throughput: Record<
    'last_minute' | 'last_hour',
    { window_ms: number; SUCCEEDED: number; FAILED: number; CANCELLED: number; total: number; per_second: number }
  >;
  in_flight: {
    id: number;
    class: string;
    status: string;
    owner_id: string;
    pid: number | null;
    attempt: number;
    heartbeat_at: number;
    heartbeat_age_ms: number;
    lease_left_ms: number;
    runtime_ms: number | null;
    held_ms: number;
  }[];
  retries: {
    since: number;
    buckets: { class: string; status: string; attempts: number; jobs: number }[];
    finished: number;
    retried: number;
  };
  errors: {
    since: number;
    top: { code: string; count: number; last_at: number }[];
    by_class: { class: string; code: string; count: number }[];
  };
  retention: {
    policy: Record<string, number>;
    would_delete: { status: string; older_than_days: number; finished_before: number; count: number }[];
    total: number;
  };
  database: { bytes: number; page_count: number; page_size: number; free_pages: number };
}
