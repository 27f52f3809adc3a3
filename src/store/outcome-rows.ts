/**
 * The outcomes a reader follows (Queue.waitFor, Queue.events): the terminal
 * events of job_events, read from the data in an order no later commit can
 * break, and what each one says about its job. Both drivers read the rows;
 * the rule of what a row means lives here once.
 */
import { TERMINAL_STATUSES, type TerminalStatus } from './data.js';

/** The `stage` of the CANCELLED event that only asks a held job's worker to stop (EVENTS.cancelRequested): no end yet. */
export const CANCEL_REQUESTED = 'requested';

/** `('SUCCEEDED', 'FAILED', 'CANCELLED')`, for both drivers' statements on jobs.status. */
export const TERMINAL_LIST = `(${TERMINAL_STATUSES.map((status) => `'${status}'`).join(', ')})`;

/**
 * Where a reader of outcomes stands: just after the terminal event `id`
 * written by the transaction `txid`. SQLite commits its ids in order, so its
 * txid is always '0'; PostgreSQL's is the writing transaction's id (xid8, as
 * decimal text), '0' for rows written before migration 12, which come first.
 */
export interface OutcomePosition {
  txid: string;
  id: number;
}

/** Before every outcome. */
export const OUTCOMES_START: OutcomePosition = { txid: '0', id: 0 };

/** A terminal event as a driver reads it, with its job's class and error code now. */
export interface OutcomeEventRow {
  /** job_events.id */
  id: number;
  txid: string;
  job_id: number;
  class: string;
  event: TerminalStatus;
  detail: string | null;
  job_error_code: string | null;
  ts: number;
}

/** What a terminal event says about its job. */
export interface OutcomeFacts {
  status: TerminalStatus;
  error_code: string | null;
}

/**
 * The outcome a terminal event records, or none: the CANCELLED event of a
 * cancel request on a held job (EVENTS.cancelRequested) only marks the job,
 * whose worker ends it later with an event of its own. The error code is the
 * one the event's detail names, else the job's (a cancel of a queued job
 * names none); a success has none.
 */
export function outcomeOf(row: OutcomeEventRow): OutcomeFacts | undefined {
  if (row.event === 'SUCCEEDED') return { status: row.event, error_code: null };
  const detail = (row.detail === null ? {} : JSON.parse(row.detail)) as { stage?: unknown; code?: unknown };
  if (row.event === 'CANCELLED' && detail.stage === CANCEL_REQUESTED) return undefined;
  return { status: row.event, error_code: typeof detail.code === 'string' ? detail.code : row.job_error_code };
}
