/** `leasehold show <id>`: the job's row, its attempts and its event timeline. */
import { NotFoundError } from '../../errors.js';
import type { AttemptRow, EventRow, JobRow } from '../../store/types.js';
import { defineJobCommand, output } from '../context.js';
import { clip, fields, formatAgo, formatBytes, formatCpu, formatDuration, formatWhen, table } from '../format.js';

export const showCommand = defineJobCommand({
  command: 'show <id>',
  describe: "a job: its row, attempts and event timeline",
  run: async (id, { store, clock, json }) => {
    const job = await store.jobGet({ id });
    if (job === undefined) throw new NotFoundError(`job ${id}`);
    const [attempts, events] = [await store.attemptList({ jobId: id }), await store.eventList({ jobId: id })];
    const now = clock.now();
    output(json, { job: jobJson(job), attempts, events: events.map(eventJson) }, () => showText(job, attempts, events, now));
  },
});

/** The row with its JSON columns (payload, result, progress) parsed. */
export function jobJson(job: JobRow): Record<string, unknown> {
  return { ...job, payload: parseStored(job.payload), result: parseStored(job.result), progress: parseStored(job.progress) };
}

function eventJson(event: EventRow): Record<string, unknown> {
  return { ...event, detail: parseStored(event.detail) };
}

function parseStored(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function showText(job: JobRow, attempts: AttemptRow[], events: EventRow[], now: number): string {
  const runtime = job.started_at === null ? null : (job.finished_at ?? now) - job.started_at;
  const sections = [
    fields([
      ['job', job.id],
      ['class', job.class],
      ['status', job.status + (job.cancel_requested_at !== null && job.status !== 'CANCELLED' ? ' (cancel requested)' : '')],
      ['priority', job.priority],
      ['attempts', `${job.attempts} of at most ${job.max_retries + 1}${job.releases > 0 ? ` (${job.releases} handed back, not counted)` : ''}`],
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
      ['error', job.error_code === null ? null : `${job.error_code}: ${clip(job.error_detail, 200)}`],
      ['payload', clip(job.payload, 200)],
      ['result', clip(job.result, 200)],
      ['progress', clip(job.progress, 200)],
    ]),
    '',
    'attempts',
    table(
      ['#', 'status', 'owner', 'started', 'took', 'cpu', 'peak rss', 'error'],
      attempts.map((a) => [
        a.attempt,
        a.status,
        a.owner_id,
        formatAgo(a.started_at, now),
        formatDuration((a.finished_at ?? now) - a.started_at) + (a.finished_at === null ? ' so far' : ''),
        formatCpu(a.cpu_ms),
        formatBytes(a.peak_rss_bytes),
        a.error_code === null ? null : `${a.error_code}: ${clip(a.error_detail, 60)}`,
      ]),
    ),
    '',
    'timeline',
    table(
      ['when', 'ago', 'event', 'actor', 'detail'],
      timeline(job, events).map((e) => [formatWhen(e.ts, now).split(' (')[0], formatAgo(e.ts, now), e.event, e.actor, clip(e.detail, 80)]),
    ),
  ];
  return sections.join('\n');
}

type TimelineLine = Pick<EventRow, 'ts' | 'event' | 'actor' | 'detail'>;

/**
 * The stored events as a story: a claim writes no event of its own (the
 * start that follows carries it), so each start shows as the claim, then the
 * start; a job held now whose start is not written yet shows its claim from
 * the row.
 */
function timeline(job: JobRow, events: EventRow[]): TimelineLine[] {
  const lines = events.flatMap((e): TimelineLine[] => {
    const detail = e.event === 'STARTED' ? (parseStored(e.detail) as { attempt?: number; owner_id?: string; claimed_at?: number } | null) : null;
    if (detail?.claimed_at === undefined || detail.owner_id === undefined) return [e];
    const attempt = JSON.stringify({ attempt: detail.attempt });
    return [
      { ts: detail.claimed_at, event: 'CLAIMED', actor: detail.owner_id, detail: attempt },
      { ts: e.ts, event: e.event, actor: e.actor, detail: attempt },
    ];
  });
  if (job.status === 'CLAIMED' && job.claimed_at !== null && job.owner_id !== null) {
    lines.push({ ts: job.claimed_at, event: 'CLAIMED', actor: job.owner_id, detail: JSON.stringify({ attempt: job.attempts, held: true }) });
  }
  return lines;
}
