/** The jobs page: filters, a lookup by id or idempotency key, newest first, one keyset page at a time. */
import { html } from 'hono/html';
import { attemptsCell } from '../../reports/job-view.js';
import { JOB_STATUSES } from '../../store/types.js';
import type { JobsPage, JobsQuery } from '../data.js';
import { cancelQueuedUrl, jobsUrl, retryFailedUrl } from '../params.js';
import { ago, jobLink, layout, live, statusBadge, table, type Frame, type Html } from './layout.js';

export function jobsPage(frame: Frame, query: JobsQuery, page: JobsPage, now: number): Html {
  const firstPage = query.beforeId === undefined;
  const rows = page.jobs.map(
    (job) =>
      html`<tr data-job="${job.id}"><td>${jobLink(job.id)}</td><td><a href="${jobsUrl({ class: job.class })}">${job.class}</a></td><td>${statusBadge(job.status)}</td><td class="num">${attemptsCell(job)}</td><td>${ago(job.created_at, now)}</td><td>${ago(job.finished_at, now)}</td><td>${job.error_code === null ? '' : html`<code title="${job.error_detail ?? ''}">${job.error_code}</code>`}</td></tr>`,
  );
  const next =
    page.next_before_id === null
      ? ''
      : html`<a href="${jobsUrl({ ...query, beforeId: page.next_before_id })}" role="button" class="outline" rel="next">Next page →</a>`;
  const bulk = page.jobs.length === 0 || frame.readOnly ? '' : bulkAction(query);
  return layout(
    frame,
    html`${filters(query)}
${live(
  firstPage ? jobsUrl(query) : undefined,
  now,
  html`<h2>${describe(query)}</h2>
${table(['job', 'class', 'status', { numeric: 'attempts' }, 'created', 'finished', 'error'], rows, 'No jobs match.')}`,
)}
<nav class="pager">${firstPage ? '' : html`<a href="${jobsUrl({ ...query, beforeId: undefined })}" role="button" class="outline">← Newest</a>`} ${next} ${bulk}</nav>`,
  );
}

/** Every job of the filter at once: FAILED ones retried, QUEUED ones cancelled (each after a confirmation that counts them). */
function bulkAction(query: JobsQuery): Html | '' {
  if (query.status === 'FAILED')
    return html`<a href="${retryFailedUrl({ class: query.class, errorCode: query.errorCode })}" role="button" class="secondary">Retry all of these FAILED jobs…</a>`;
  if (query.status === 'QUEUED' && query.errorCode === undefined)
    return html`<a href="${cancelQueuedUrl(query.class)}" role="button" class="secondary outline">Cancel all of these QUEUED jobs…</a>`;
  return '';
}

function describe(query: JobsQuery): string {
  const parts = [query.status ?? 'all', query.class === undefined ? 'jobs' : `${query.class} jobs`];
  if (query.errorCode !== undefined) parts.push(`with error ${query.errorCode}`);
  if (query.beforeId !== undefined) parts.push(`before #${query.beforeId}`);
  return `${parts.join(' ')}, newest first`;
}

function filters(query: JobsQuery): Html {
  const option = (value: string, label: string) =>
    html`<option value="${value}" ${(query.status ?? '') === value ? 'selected' : ''}>${label}</option>`;
  return html`<div class="grid filters">
<form method="get" action="/jobs" class="filter" role="search">
<fieldset role="group">
<input name="class" placeholder="class" aria-label="class" value="${query.class ?? ''}">
<select name="status" aria-label="status">${option('', 'any status')}${JOB_STATUSES.map((s) => option(s, s))}</select>
<input name="error_code" placeholder="error code" aria-label="error code" value="${query.errorCode ?? ''}">
<button type="submit">Filter</button>
</fieldset>
</form>
<form method="get" action="/jobs/lookup" class="lookup" role="search">
<fieldset role="group">
<input name="q" placeholder="job id or idempotency key" aria-label="job id or idempotency key" required>
<button type="submit" class="secondary">Find</button>
</fieldset>
</form>
</div>`;
}
