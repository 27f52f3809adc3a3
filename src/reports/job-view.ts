/**
 * One job in words, as `leasehold show` prints it and the dashboard's job
 * page shows it: its fields, its attempts and its event timeline. Each caller
 * lays the lines out its own way (aligned text, HTML tables); `textLimit`
 * clips long text to one line where a terminal needs it.
 */
import { runsOf } from '../store/policy.js';
import type { AttemptRow, EventRow, JobRow } from '../store/types.js';
import { clip, formatAgo, formatBytes, formatCpu, formatDuration, formatTime, formatWhen } from './format.js';

export type FieldValue = string | number | null;

/** A stored JSON column (payload, result, progress, an event's detail) parsed, or the text itself when it is not JSON. */
export function parseStored(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The row with its JSON columns (payload, result, progress) parsed. */
export function jobJson(job: JobRow): Record<string, unknown> {
  return {
    ...job,
    payload: parseStored(job.payload),
    result: parseStored(job.result),
    progress: parseStored(job.progress),
  };
}

/** A field of an event's detail that holds a time (epoch milliseconds): `run_at`, `claimed_at`, `ts`. */
const TIME_FIELD = /(^|_)at$|^ts$/;

/**
 * An event's detail JSON with its times as times (`"run_at":"2026-01-01 12:00:03Z"`, as the timeline's own
 * column), for reading; anything that is not a JSON object stays as stored.
 */
export function readableDetail(text: string | null): string | null {
  const parsed = parseStored(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return text;
  const readable = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map(readable);
    return Object.fromEntries(
      Object.entries(value).map(([key, field]) => [
        key,
        TIME_FIELD.test(key) && Number.isInteger(field) ? formatTime(field as number) : readable(field),
      ]),
    );
  };
  return JSON.stringify(readable(parsed));
}

function limited(text: string | null, textLimit: number | undefined): string | null {
  if (text === null) return null;
  return textLimit === undefined ? text : clip(text, textLimit);
}

/**
 * A job whose enqueue set no max_retries has its class's only once a worker
 * claims it (from that worker's config): until then the row's value is a
 * placeholder, so neither form shows it.
 */
const waitsForClassLimit = (job: JobRow) => job.max_retries_from_class === 1 && job.attempts === 0;

/** Runs so far and the most the job may run, in words. */
function attemptsOfMost(job: JobRow): string {
  if (waitsForClassLimit(job))
    return `${runsOf(job)} of at most the class's max_retries + 1, read when a worker claims it`;
  return `${runsOf(job)} of at most ${job.max_retries + 1}${job.max_retries_from_class === 1 ? " (the class's max_retries when last claimed)" : ''}`;
}

/** The same in a table cell: `runs/most`, `0/class` until the class's limit is read. */
export function attemptsCell(job: JobRow): string {
  return `${runsOf(job)}/${waitsForClassLimit(job) ? 'class' : job.max_retries + 1}`;
}

/** The row's fields as (label, value), in the order an operator reads them; the JSON columns (payload, result, progress) are left to the caller. */
export function jobFields(job: JobRow, now: number, textLimit?: number): [string, FieldValue][] {
  const runtime = job.started_at === null ? null : (job.finished_at ?? now) - job.started_at;
  return [
    ['job', job.id],
    ['class', job.class],
    [
      'status',
      job.status + (job.cancel_requested_at !== null && job.status !== 'CANCELLED' ? ' (cancel requested)' : ''),
    ],
    ...(job.status === 'WAITING'
      ? [['waiting for', `${job.pending_parents} parent(s) to end`] as [string, FieldValue]]
      : []),
    ['priority', job.priority],
    ['attempts', `${attemptsOfMost(job)}${job.releases > 0 ? ` (${job.releases} handed back, not counted)` : ''}`],
    ['created', formatWhen(job.created_at, now)],
    ['run at', formatWhen(job.run_at, now)],
    ['claimed', formatWhen(job.claimed_at, now)],
    ['started', formatWhen(job.started_at, now)],
    ['heartbeat', formatWhen(job.heartbeat_at, now)],
    ['lease expires', formatWhen(job.lease_expires_at, now)],
    ['finished', formatWhen(job.finished_at, now)],
    ['runtime', runtime === null ? '-' : formatDuration(runtime)],
    ['owner', job.owner_id],
    ['lease token', job.lease_token],
    ['key', job.idempotency_key],
    ...keyFields(job, now),
    ['error', job.error_code === null ? null : `${job.error_code}: ${limited(job.error_detail, textLimit) ?? '-'}`],
  ];
}

/** When a job's key is free again, while it holds one. */
function keyFields(job: JobRow, now: number): [string, FieldValue][] {
  if (job.idempotency_key === null) return [];
  const scope =
    job.key_scope === 'incomplete'
      ? 'incomplete: free again once the job has ended'
      : "row: held while the job's row exists";
  return [
    ['key scope', scope],
    ...(job.key_expires_at === null
      ? []
      : [['key expires', formatWhen(job.key_expires_at, now)] as [string, FieldValue]]),
  ];
}

/** An attempt as a row of the attempts table. */
export interface AttemptLine {
  attempt: number;
  status: AttemptRow['status'];
  owner: string;
  started: string;
  took: string;
  /** The child's CPU and peak resident memory while the attempt ran (shared with the jobs beside it when concurrency > 1). */
  cpu: string;
  peak_rss: string;
  error: string | null;
}

export function attemptLines(attempts: readonly AttemptRow[], now: number, textLimit?: number): AttemptLine[] {
  return attempts.map((a) => ({
    attempt: a.attempt,
    status: a.status,
    owner: a.owner_id,
    started: formatAgo(a.started_at, now),
    took: formatDuration((a.finished_at ?? now) - a.started_at) + (a.finished_at === null ? ' so far' : ''),
    cpu: formatCpu(a.cpu_ms),
    peak_rss: formatBytes(a.peak_rss_bytes),
    error: a.error_code === null ? null : `${a.error_code}: ${limited(a.error_detail, textLimit) ?? '-'}`,
  }));
}

/** A line of the timeline, as read. */
export interface TimelineLine {
  when: string;
  ago: string;
  event: string;
  actor: string | null;
  detail: string | null;
}

type TimelineEvent = Pick<EventRow, 'ts' | 'event' | 'actor' | 'detail'>;

/**
 * The stored events as a story: a claim writes no event of its own (the
 * start that follows carries it), so each start shows as the claim, then the
 * start; a job held now whose start is not written yet shows its claim from
 * the row.
 */
export function timelineLines(
  job: JobRow,
  events: readonly EventRow[],
  now: number,
  textLimit?: number,
): TimelineLine[] {
  const story = events.flatMap((e): TimelineEvent[] => {
    const detail =
      e.event === 'STARTED'
        ? (parseStored(e.detail) as { attempt?: number; owner_id?: string; claimed_at?: number } | null)
        : null;
    if (detail?.claimed_at === undefined || detail.owner_id === undefined) return [e];
    const attempt = JSON.stringify({ attempt: detail.attempt });
    return [
      { ts: detail.claimed_at, event: 'CLAIMED', actor: detail.owner_id, detail: attempt },
      { ts: e.ts, event: e.event, actor: e.actor, detail: attempt },
    ];
  });
  if (job.status === 'CLAIMED' && job.claimed_at !== null && job.owner_id !== null) {
    story.push({
      ts: job.claimed_at,
      event: 'CLAIMED',
      actor: job.owner_id,
      detail: JSON.stringify({ attempt: job.attempts, held: true }),
    });
  }
  return story.map((e) => ({
    when: formatTime(e.ts),
    ago: formatAgo(e.ts, now),
    event: e.event,
    actor: e.actor,
    detail: limited(readableDetail(e.detail), textLimit),
  }));
}
