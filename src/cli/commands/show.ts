/**
 * `leasehold show <id>`: the job's row, its parents and children in a flow, its attempts, the last failure's
 * stack, and its event timeline; `--logs` adds its own log lines.
 */
import { NotFoundError } from '../../errors.js';
import { jobFlow, moreChildrenLine, onParentFailureText, type FlowJob, type JobFlow } from '../../reports/job-flow.js';
import { lastStack, logsText } from '../../reports/job-logs.js';
import { attemptLines, jobFields, jobJson, parseStored, timelineLines } from '../../reports/job-view.js';
import type { AttemptRow, EventRow, JobLogRow, JobRow } from '../../store/types.js';
import { defineJobCommand, output, type JobArgs } from '../context.js';
import { clip, fields, table } from '../format.js';

interface ShowArgs extends JobArgs {
  logs: boolean;
}

export const showCommand = defineJobCommand<ShowArgs>({
  command: 'show <id>',
  describe: 'a job: its row, parents and children, attempts, last stack trace and event timeline',
  options: {
    logs: { type: 'boolean', default: false, describe: "also print the job's own log lines (ctx.log), per attempt" },
  },
  run: async (id, { store, clock, json }, args) => {
    const job = await store.jobGet({ id });
    if (job === undefined) throw new NotFoundError(`job ${id}`);
    const [flow, attempts, events] = [
      await jobFlow(store, id),
      await store.attemptList({ jobId: id }),
      await store.eventList({ jobId: id }),
    ];
    const logs = args.logs ? await store.logList({ jobId: id }) : undefined;
    const now = clock.now();
    const value = {
      job: jobJson(job),
      ...flow,
      attempts,
      events: events.map(eventJson),
      ...(logs === undefined ? {} : { logs }),
    };
    output(json, value, () => showText(job, flow, attempts, events, logs, now));
  },
});

function eventJson(event: EventRow): Record<string, unknown> {
  return { ...event, detail: parseStored(event.detail) };
}

function showText(
  job: JobRow,
  flow: JobFlow,
  attempts: AttemptRow[],
  events: EventRow[],
  logs: JobLogRow[] | undefined,
  now: number,
): string {
  const stack = lastStack(attempts);
  const sections = [
    // The error in full: the row keeps a summary of a few hundred characters, the stack below keeps the rest.
    fields([
      ...jobFields(job, now),
      ['payload', clip(job.payload, 200)],
      ['result', clip(job.result, 200)],
      ['progress', clip(job.progress, 200)],
    ]),
    ...flowText(job, flow),
    '',
    'attempts',
    table(
      ['#', 'status', 'owner', 'started', 'took', 'cpu', 'peak rss', 'error'],
      attemptLines(attempts, now, 60).map((a) => [
        a.attempt,
        a.status,
        a.owner,
        a.started,
        a.took,
        a.cpu,
        a.peak_rss,
        a.error,
      ]),
    ),
    ...(stack === undefined ? [] : ['', `stack trace (attempt ${stack.attempt})`, indent(stack.stack)]),
    ...(logs === undefined ? [] : ['', 'logs', logsText(logs)]),
    '',
    'timeline',
    table(
      ['when', 'ago', 'event', 'actor', 'detail'],
      timelineLines(job, events, now, 80).map((e) => [e.when, e.ago, e.event, e.actor, e.detail]),
    ),
  ];
  return sections.join('\n');
}

/** Its parents and children, when it has any. */
function flowText(job: JobRow, flow: JobFlow): string[] {
  const jobs = (rows: FlowJob[]) =>
    table(
      ['id', 'class', 'status', 'error'],
      rows.map((row) => [row.id, row.class, row.status, row.error_code]),
    );
  const more = moreChildrenLine(flow);
  return [
    ...(flow.parents.length === 0 ? [] : ['', `parents (${onParentFailureText(job)})`, jobs(flow.parents)]),
    ...(flow.children.length === 0 ? [] : ['', 'children', jobs(flow.children), ...(more === undefined ? [] : [more])]),
  ];
}

const indent = (text: string) => text.replace(/^/gm, '  ');
