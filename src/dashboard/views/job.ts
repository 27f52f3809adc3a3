/**
 * One job: every field, payload, result and progress as formatted JSON, its parents and children (links), its
 * attempts, its timeline (as `leasehold show` prints them), and its actions.
 */
import { html } from 'hono/html';
import { moreChildrenLine, onParentFailureText, type FlowJob } from '../../reports/job-flow.js';
import { logLines } from '../../reports/job-logs.js';
import { attemptLines, jobFields, parseStored, timelineLines } from '../../reports/job-view.js';
import type { JobRow } from '../../store/types.js';
import type { JobDetail } from '../data.js';
import { jobsUrl } from '../params.js';
import { actionForm, jobLink, layout, live, statusBadge, table, type Frame, type Html } from './layout.js';

/** What an action did, shown once above the job after it (the `done` parameter of the redirect). */
export const DONE_NOTICES = {
  retried: 'Queued to run again.',
  cancelled: 'Cancelled.',
  cancel_requested: 'Cancel requested: its worker aborts it at the next heartbeat.',
  already_requested: 'Cancel was already requested.',
  already_cancelled: 'It was already cancelled.',
  enqueued: 'Enqueued by hand from its schedule.',
} as const;
export type DoneNotice = keyof typeof DONE_NOTICES;

export function jobPage(frame: Frame, detail: JobDetail, now: number, done: DoneNotice | undefined): Html {
  const { job } = detail;
  const notice =
    done === undefined ? '' : html`<article class="alert notice" role="status">${DONE_NOTICES[done]}</article>`;
  const attempts = attemptLines(detail.attempts, now).map((a, i) => {
    const { error_code, error_detail } = detail.attempts[i]!;
    return html`<tr><td class="num">${a.attempt}</td><td>${statusBadge(a.status)}</td><td><small>${a.owner}</small></td><td>${a.started}</td><td>${a.took}</td><td class="num">${a.cpu}</td><td class="num">${a.peak_rss}</td><td class="error">${errorInFull(error_code, error_detail)}</td></tr>`;
  });
  const timeline = timelineLines(job, detail.events, now).map(
    (e) =>
      html`<tr><td><small>${e.when}</small></td><td>${e.ago}</td><td><strong class="event-${e.event.toLowerCase()}">${e.event}</strong></td><td><small>${e.actor ?? '-'}</small></td><td><code class="detail">${e.detail ?? ''}</code></td></tr>`,
  );
  return layout(
    frame,
    html`${notice}${live(
      `/jobs/${job.id}`,
      now,
      html`<hgroup class="job-title"><h1>Job #${job.id} ${statusBadge(job.status)}</h1><p>class <a href="${jobsUrl({ class: job.class })}">${job.class}</a></p></hgroup>
${actions(frame, job)}
<div class="grid panels">
<section><h2>Fields</h2><table class="fields"><tbody>${jobFields(job, now).map(([label, value]) => html`<tr><th scope="row">${label}</th>${label === 'error' && value !== null ? html`<td class="error">${errorInFull(job.error_code, job.error_detail)}</td>` : html`<td>${value ?? '-'}</td>`}</tr>`)}</tbody></table></section>
<section>${json('Payload', job.payload)}${json('Result', job.result)}${json('Progress', job.progress)}</section>
</div>
${flow(detail)}
<section><h2>Attempts</h2>${table([{ numeric: '#' }, 'status', 'owner', 'started', 'took', { numeric: 'CPU' }, { numeric: 'peak RSS' }, 'error'], attempts, noAttempts(job))}</section>
${stacks(detail)}
<section id="logs"><h2>Logs</h2>${logTable(detail)}</section>
<section><h2>Timeline</h2>${table(['when', 'ago', 'event', 'actor', 'detail'], timeline, 'No events.')}</section>`,
    )}`,
  );
}

/** What the attempts table says of a job that never ran: whether it still may, and why not when it cannot. */
function noAttempts(job: JobRow): string {
  if (job.status === 'CANCELLED')
    return `Never ran: cancelled${job.error_detail === null ? '' : `, ${job.error_detail}`}.`;
  if (job.status === 'WAITING') return 'Not run yet: it waits for its parents.';
  return 'Not run yet.';
}

/** Its parents and children, each a link with its status, when it has any. */
function flow(detail: JobDetail): Html {
  const { parents, children } = detail.flow;
  if (parents.length === 0 && children.length === 0) return html``;
  const jobs = (rows: FlowJob[]) =>
    table(
      ['job', 'class', 'status', 'error'],
      rows.map(
        (row) =>
          html`<tr><td>${jobLink(row.id)}</td><td><a href="${jobsUrl({ class: row.class })}">${row.class}</a></td><td>${statusBadge(row.status)}</td><td>${row.error_code === null ? '' : html`<code>${row.error_code}</code>`}</td></tr>`,
      ),
      '',
    );
  const more = moreChildrenLine(detail.flow);
  return html`<div class="grid panels flow">${parents.length === 0 ? '' : html`<section id="parents"><h2>Parents</h2><p class="muted"><small>${onParentFailureText(detail.job)}</small></p>${jobs(parents)}</section>`}${children.length === 0 ? '' : html`<section id="children"><h2>Children</h2>${jobs(children)}${more === undefined ? '' : html`<p class="muted more">${more}</p>`}</section>`}</div>`;
}

/** An error as written, "CODE: detail" as `leasehold show` puts it, the detail whole: line breaks kept, long lines wrapped. */
function errorInFull(code: string | null, detail: string | null): Html {
  if (code === null) return html``;
  if (detail === null) return html`<strong class="bad">${code}</strong>`;
  return html`<strong class="bad">${code}:</strong> <pre class="error-detail">${detail}</pre>`;
}

/** Each attempt's stack, the last one open: the thrown error's stack and cause chain, or what a dead child said last. */
function stacks(detail: JobDetail): Html {
  const withStack = detail.attempts.filter((a) => a.error_stack !== null);
  if (withStack.length === 0) return html``;
  const last = withStack[withStack.length - 1];
  return html`<section id="stack"><h2>Stack trace</h2>${withStack.map(
    (a) =>
      html`<details ${a === last ? 'open' : ''}><summary>attempt ${a.attempt}: ${a.error_code ?? a.status}</summary><pre class="stack"><code>${a.error_stack}</code></pre></details>`,
  )}</section>`;
}

/** The job's own log lines (ctx.log), per attempt, in order. */
function logTable(detail: JobDetail): Html {
  const rows = logLines(detail.logs).map(
    (l) =>
      html`<tr class="log-${l.level}"><td class="num">${l.attempt}</td><td><small>${l.time}</small></td><td>${l.level}</td><td><code class="detail">${l.message}${l.fields === null ? '' : ` ${l.fields}`}</code></td></tr>`,
  );
  return table(
    [{ numeric: '#' }, 'time', 'level', 'message'],
    rows,
    'No log lines: the handler wrote none with ctx.log.',
  );
}

function json(title: string, stored: string | null): Html {
  if (stored === null) return html`<h3>${title}</h3><p class="muted">none</p>`;
  const value = parseStored(stored);
  return html`<h3>${title}</h3><pre class="json"><code>${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</code></pre>`;
}

function actions(frame: Frame, job: JobRow): Html {
  const retry = job.status === 'FAILED' ? actionForm(frame, { url: `/jobs/${job.id}/retry`, label: 'Retry' }) : '';
  const cancellable =
    job.status === 'QUEUED' ||
    job.status === 'WAITING' ||
    ((job.status === 'CLAIMED' || job.status === 'RUNNING') && job.cancel_requested_at === null);
  const cancel = cancellable
    ? actionForm(frame, {
        url: `/jobs/${job.id}/cancel`,
        label: 'Cancel',
        confirm: `Cancel job ${job.id}?`,
        danger: true,
      })
    : '';
  return retry === '' && cancel === '' ? html`` : html`<div class="actions">${retry}${cancel}</div>`;
}
