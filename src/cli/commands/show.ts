/** `leasehold show <id>`: the job's row, its attempts and its event timeline. */
import { NotFoundError } from '../../errors.js';
import { attemptLines, jobFields, jobJson, parseStored, timelineLines } from '../../reports/job-view.js';
import type { AttemptRow, EventRow, JobRow } from '../../store/types.js';
import { defineJobCommand, output } from '../context.js';
import { clip, fields, table } from '../format.js';

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

function eventJson(event: EventRow): Record<string, unknown> {
  return { ...event, detail: parseStored(event.detail) };
}

function showText(job: JobRow, attempts: AttemptRow[], events: EventRow[], now: number): string {
  const sections = [
    fields([
      ...jobFields(job, now, 200),
      ['payload', clip(job.payload, 200)],
      ['result', clip(job.result, 200)],
      ['progress', clip(job.progress, 200)],
    ]),
    '',
    'attempts',
    table(
      ['#', 'status', 'owner', 'started', 'took', 'cpu', 'peak rss', 'error'],
      attemptLines(attempts, now, 60).map((a) => [a.attempt, a.status, a.owner, a.started, a.took, a.cpu, a.peak_rss, a.error]),
    ),
    '',
    'timeline',
    table(
      ['when', 'ago', 'event', 'actor', 'detail'],
      timelineLines(job, events, now, 80).map((e) => [e.when, e.ago, e.event, e.actor, e.detail]),
    ),
  ];
  return sections.join('\n');
}
