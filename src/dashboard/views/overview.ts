/** The overview: what an on-call engineer reads first. Counts by class and status, throughput, the oldest jobs in flight, top errors, classes in trouble, and what jobs cost. */
import { html } from 'hono/html';
import { formatBytes, formatCpu, formatDuration } from '../../reports/format.js';
import type { AttemptCostRow } from '../../store/types.js';
import { JOB_STATUSES, type JobStatus } from '../../store/types.js';
import type { Overview } from '../data.js';
import { jobsUrl, retryFailedUrl } from '../params.js';
import { throughputChart } from './chart.js';
import { actionForm, ago, jobLink, layout, live, statusBadge, table, type Frame, type Html } from './layout.js';

export function overviewPage(frame: Frame, overview: Overview): Html {
  return layout(
    frame,
    live(
      '/',
      overview.now,
      html`${alerts(overview)}${tiles(overview)}
<section><h2>Jobs by class</h2>${byClass(frame, overview)}</section>
<div class="grid panels">
<section><h2>Throughput</h2>${throughputChart(overview.throughput)}</section>
<section><h2>Top errors <small class="muted">last hour</small></h2>${topErrors(frame, overview)}</section>
</div>
<section><h2>Oldest in flight</h2>${inFlight(overview)}</section>
${cost(overview)}`,
    ),
  );
}

/** Classes in a crash loop, disabled or paused: said first, in a colour that stands out. */
function alerts(overview: Overview): Html {
  const troubles = overview.troubles.map(
    (t) =>
      html`<li><strong>${t.class}</strong> ${t.kind === 'crash_loop' ? 'is in a crash loop' : 'is disabled'}${t.supervisor_id === null ? '' : html` on ${t.supervisor_id}`}: ${t.reason} <small class="muted">(since ${ago(t.since, overview.now)})</small></li>`,
  );
  const paused = overview.paused.map(
    (p) =>
      html`<li><strong>${p.class}</strong> is paused by ${p.paused_by ?? '-'} <small class="muted">(${ago(p.paused_at, overview.now)})</small>: its jobs wait until it is resumed</li>`,
  );
  return html`${troubles.length === 0 ? '' : html`<article class="alert trouble"><ul>${troubles}</ul></article>`}${paused.length === 0 ? '' : html`<article class="alert paused"><ul>${paused}</ul></article>`}`;
}

function tiles(overview: Overview): Html {
  const { total } = overview.counts;
  const tile = (status: JobStatus) =>
    html`<a class="tile status-${status.toLowerCase()}${total[status] === 0 ? ' zero' : ''}" href="${jobsUrl({ status })}"><span class="count" data-status="${status}">${total[status]}</span><span class="label">${status}</span></a>`;
  return html`<div class="tiles">${JOB_STATUSES.map(tile)}<a class="tile" href="/jobs"><span class="count" data-status="total">${total.total}</span><span class="label">ALL JOBS</span></a></div>`;
}

function byClass(frame: Frame, overview: Overview): Html {
  const cell = (jobClass: string, status: JobStatus, count: number) =>
    count === 0
      ? html`<td class="num muted">0</td>`
      : html`<td class="num"><a href="${jobsUrl({ class: jobClass, status })}">${count}</a></td>`;
  const paused = new Set(overview.paused.map((p) => p.class));
  const troubled = new Map(
    overview.troubles.map((t) => [t.class, t.kind === 'crash_loop' ? 'crash loop' : 'disabled']),
  );
  const queues = new Map(overview.queues.map((q) => [q.class, q]));
  const unserved = html` <span class="badge trouble" title="jobs are due and no live worker of the class runs on any host">unserved</span>`;
  const marks = (name: string) =>
    html`${paused.has(name) ? html` <span class="badge paused">paused</span>` : ''}${troubled.has(name) ? html` <span class="badge trouble">${troubled.get(name)}</span>` : ''}${queues.get(name)?.unserved === true ? unserved : ''}`;
  const oldestDue = (name: string) => {
    const age = queues.get(name)?.oldest_age_seconds ?? 0;
    return age === 0
      ? html`<td class="num muted" data-oldest-age="0">-</td>`
      : html`<td class="num" data-oldest-age="${age}">${formatDuration(age * 1000)}</td>`;
  };
  const rows = overview.counts.by_class.map(
    (row) =>
      html`<tr data-class="${row.class}"><th scope="row"><a href="${jobsUrl({ class: row.class })}">${row.class}</a>${marks(row.class)}</th>${JOB_STATUSES.map((s) => cell(row.class, s, row[s]))}<td class="num">${row.total}</td>${oldestDue(row.class)}<td class="row-actions">${row.FAILED > 0 && !frame.readOnly ? html`<a href="${retryFailedUrl({ class: row.class })}" class="small-action">retry failed</a>` : ''}${pauseOrResume(frame, row.class, paused.has(row.class))}</td></tr>`,
  );
  return table(
    ['class', ...JOB_STATUSES.map((s) => ({ numeric: s })), { numeric: 'total' }, { numeric: 'oldest due' }, ''],
    rows,
    'No jobs yet.',
  );
}

/** A running class can be paused (its claims stop on every host), a paused one resumed. */
function pauseOrResume(frame: Frame, jobClass: string, paused: boolean): Html {
  const url = `/classes/${encodeURIComponent(jobClass)}/${paused ? 'resume' : 'pause'}`;
  return paused
    ? actionForm(frame, { url, label: 'Resume' })
    : actionForm(frame, {
        url,
        label: 'Pause',
        danger: true,
        confirm: `Pause ${jobClass}? No host claims its jobs until it is resumed; jobs running now go on.`,
      });
}

function inFlight(overview: Overview): Html {
  const rows = overview.in_flight.map((job) => {
    const lease =
      job.lease_left_ms === null
        ? html`-`
        : job.lease_left_ms >= 0
          ? html`${formatDuration(job.lease_left_ms)}`
          : html`<span class="bad">expired ${formatDuration(-job.lease_left_ms)} ago</span>`;
    return html`<tr><td>${jobLink(job.id)}</td><td>${job.class}</td><td>${statusBadge(job.status)}${job.cancel_requested ? html` <small>cancel requested</small>` : ''}</td><td><small>${job.owner_id ?? '-'}</small></td><td class="num">${job.held_ms === null ? '-' : formatDuration(job.held_ms)}</td><td class="num">${job.heartbeat_age_ms === null ? '-' : formatDuration(job.heartbeat_age_ms)}</td><td class="num">${lease}</td></tr>`;
  });
  return table(
    ['job', 'class', 'status', 'owner', { numeric: 'held' }, { numeric: 'heartbeat age' }, { numeric: 'lease left' }],
    rows,
    'Nothing in flight.',
  );
}

/** The list of a code's FAILED jobs and their bulk retry only for a code some FAILED job ended with. */
function topErrors(frame: Frame, overview: Overview): Html {
  const rows = overview.top_errors.map((e) => {
    const code = e.has_failed_jobs
      ? html`<a href="${jobsUrl({ status: 'FAILED', errorCode: e.code })}"><code>${e.code}</code></a>`
      : html`<code>${e.code}</code>`;
    const retry =
      e.has_failed_jobs && !frame.readOnly
        ? html`<a href="${retryFailedUrl({ errorCode: e.code })}" class="small-action">retry failed</a>`
        : '';
    return html`<tr><td>${code}</td><td class="num">${e.count}</td><td>${ago(e.last_at, overview.now)}</td><td>${retry}</td></tr>`;
  });
  return table(['code', { numeric: 'attempts' }, 'last', ''], rows, 'No errors in the last hour.');
}

/** "Which job class is eating this host?": classes by CPU (and their peak memory), then the attempts that used the most of each. */
function cost(overview: Overview): Html {
  const { by_cpu, slowest, hungriest } = overview.cost;
  const classes = by_cpu.map(
    (c) =>
      html`<tr><th scope="row"><a href="${jobsUrl({ class: c.class })}">${c.class}</a></th><td class="num">${c.attempts}</td><td class="num">${formatCpu(c.cpu_ms)}</td><td class="num">${formatCpu(c.mean_cpu_ms)}</td><td class="num">${formatBytes(c.max_peak_rss_bytes)}</td></tr>`,
  );
  const attempts = (rows: AttemptCostRow[]) =>
    table(
      ['job', 'class', { numeric: 'CPU' }, { numeric: 'peak RSS' }, 'ended'],
      rows.map(
        (a) =>
          html`<tr><td>${jobLink(a.job_id)} <small class="muted">#${a.attempt}</small></td><td>${a.class}</td><td class="num">${formatCpu(a.cpu_ms)}</td><td class="num">${formatBytes(a.peak_rss_bytes)}</td><td>${statusBadge(a.status)} ${ago(a.finished_at, overview.now)}</td></tr>`,
      ),
      'Nothing measured in the last hour.',
    );
  return html`<section class="cost"><h2>What jobs cost <small class="muted">last hour; a child's CPU and peak memory while the attempt ran, shared by the jobs it ran at once when concurrency is above 1</small></h2>
${table(['class', { numeric: 'attempts' }, { numeric: 'CPU' }, { numeric: 'mean CPU' }, { numeric: 'peak RSS' }], classes, 'Nothing measured in the last hour.')}
<div class="grid panels"><section><h3>Slowest (CPU)</h3>${attempts(slowest)}</section><section><h3>Hungriest (memory)</h3>${attempts(hungriest)}</section></div></section>`;
}
