/** The schedules page: each cron schedule of the config, its next run and its last, and "run now". */
import { html } from 'hono/html';
import { formatTime } from '../../reports/format.js';
import type { ScheduleView } from '../../queue/schedules.js';
import { jobsUrl } from '../params.js';
import { actionForm, ago, jobLink, layout, live, table, type Frame, type Html } from './layout.js';

/** Where a schedule's "run now" posts. */
export function runNowUrl(schedule: Pick<ScheduleView, 'class' | 'name'>): string {
  return `/schedules/${encodeURIComponent(schedule.class)}/${encodeURIComponent(schedule.name)}/run`;
}

export function schedulesPage(
  frame: Frame,
  schedules: readonly ScheduleView[],
  configured: boolean,
  now: number,
): Html {
  const rows = schedules.map(
    (s) =>
      html`<tr data-schedule="${s.class}/${s.name}"><td><a href="${jobsUrl({ class: s.class })}">${s.class}</a></td><td>${s.name}</td><td><code>${s.cron}</code> <small class="muted">${s.timezone}</small></td><td>${at(s.next_run_at, now, 'none')}</td><td>${at(s.last_run_at, now, 'never')}${s.last_job_id === null ? '' : html` ${jobLink(s.last_job_id)}`}</td><td class="row-actions">${actionForm(frame, { url: runNowUrl(s), label: 'Run now', confirm: `Enqueue one ${s.class} job of ${s.name} now? Its next run still comes as scheduled.` })}</td></tr>`,
  );
  const empty = configured
    ? 'The config has no schedules.'
    : 'This dashboard has no config (start it with --config queue.yaml): the schedules are defined there.';
  return layout(
    frame,
    live(
      '/schedules',
      now,
      html`<h2>Schedules</h2>${table(['class', 'name', 'cron', 'next run', 'last run', ''], rows, empty)}`,
    ),
  );
}

/** An exact time with how far it is from now, or a word for none. */
function at(time: number | null, now: number, none: string): Html {
  return time === null
    ? html`<span class="muted">${none}</span>`
    : html`${ago(time, now)} <small class="muted">${formatTime(time)}</small>`;
}
