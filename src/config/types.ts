/**
 * The validated configuration: what `loadConfig` returns, frozen. Durations
 * are seconds (fractional allowed), as in queue.yaml; paths are absolute
 * (resolved against the config file's folder).
 */

export interface BackoffConfig {
  base_seconds: number;
  max_seconds: number;
  jitter: boolean;
}

export interface RestartConfig {
  max_restarts: number;
  within_seconds: number;
}

export interface ClassConfig {
  name: string;
  /** Absolute path of the handler module. */
  handler: string;
  processes: number;
  lease_seconds: number;
  heartbeat_seconds: number;
  max_runtime_seconds: number;
  kill_grace_seconds: number;
  max_retries: number;
  backoff: BackoffConfig;
  max_memory_mb: number;
  restart: RestartConfig;
  /** Jobs a child claims per transaction. */
  claim_batch: number;
  /** How often an idle child looks for work, in seconds. */
  poll_seconds: number;
}

export interface LeaseholdConfig {
  /** Absolute path of the config file it came from (or '<inline>'). */
  file: string;
  /** A SQLite file path (absolute) or a postgres:// URL. */
  database: string;
  /**
   * The supervisor's host identity, written into `workers.host` and the
   * start of its id; null: not set here (LEASEHOLD_HOST, else os.hostname(),
   * see src/config/host.ts).
   */
  host: string | null;
  log: { level: 'error' | 'warn' | 'info' | 'debug'; file: string | null; max_size_mb: number; max_files: number };
  sweeper: { interval_seconds: number; batch_size: number };
  retention: { succeeded_days: number; failed_days: number; cancelled_days: number; batch_size: number; interval_seconds: number };
  http: { port: number; host: string } | null;
  shutdown_grace_seconds: number;
  payload_limit_bytes: number;
  result_limit_bytes: number;
  classes: readonly ClassConfig[];
}
