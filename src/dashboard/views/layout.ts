/**
 * The frame of every page (head, navigation, the live region) and the small
 * pieces the pages share. Every value goes through hono's `html` template,
 * which escapes it; markup comes only from these templates.
 */
import { html } from 'hono/html';
import { formatAgo, formatTime } from '../../reports/format.js';
import type { JobStatus } from '../../store/types.js';

export type Html = ReturnType<typeof html>;

/** Live pages poll their own URL this often (app.js skips it while the tab is hidden). */
export const LIVE_INTERVAL = '2s';

/** What every page's frame shows. */
export interface Frame {
  /** The tab's title and the page's heading. */
  title: string;
  nav: 'overview' | 'jobs' | 'schedules' | 'workers' | undefined;
  /** The database, its password hidden. */
  database: string;
  readOnly: boolean;
  /** The CSRF token the page's forms send back. */
  csrf: string;
}

const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  historyEnabled: false,
});

export function layout(frame: Frame, body: Html): Html {
  const link = (name: NonNullable<Frame['nav']>, href: string, label: string) =>
    html`<li><a href="${href}" ${frame.nav === name ? html`aria-current="page"` : ''}>${label}</a></li>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content="${HTMX_CONFIG}">
<title>${frame.title} · leasehold</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/pico.min.css">
<link rel="stylesheet" href="/assets/app.css">
<script src="/assets/htmx.min.js" defer></script>
<script src="/assets/app.js" defer></script>
</head>
<body>
<header class="container-fluid">
<nav>
<ul><li><a href="/" class="brand"><strong>leasehold</strong></a></li>${link('overview', '/', 'Overview')}${link('jobs', '/jobs', 'Jobs')}${link('schedules', '/schedules', 'Schedules')}${link('workers', '/workers', 'Workers')}</ul>
<ul><li><small class="muted" title="database">${frame.database}</small></li>${frame.readOnly ? html`<li><span class="badge read-only">read-only</span></li>` : ''}<li><small class="offline-note">connection lost, retrying…</small></li></ul>
</nav>
</header>
<main class="container-fluid">
${body}
</main>
</body>
</html>`;
}

/**
 * The part of a page that refreshes itself: it fetches `url` every
 * LIVE_INTERVAL and swaps in that page's own #live. `url` undefined: a still
 * page (a later page of jobs, say).
 */
export function live(url: string | undefined, now: number, content: Html): Html {
  const stamp = html`<p class="updated"><small>as of ${formatTime(now)}${url === undefined ? '' : html` · <span class="live-dot"></span> live`}</small></p>`;
  if (url === undefined) return html`<div id="live">${content}${stamp}</div>`;
  return html`<div id="live" data-live hx-get="${url}" hx-trigger="every ${LIVE_INTERVAL}, refresh" hx-select="#live" hx-swap="outerHTML">${content}${stamp}</div>`;
}

export function statusBadge(status: JobStatus | string): Html {
  return html`<span class="badge status-${status.toLowerCase()}">${status}</span>`;
}

/** "3m12s ago", with the exact time on hover. */
export function ago(at: number | null, now: number): Html {
  if (at === null) return html`<span class="muted">-</span>`;
  return html`<time datetime="${new Date(at).toISOString()}" title="${formatTime(at)}">${formatAgo(at, now)}</time>`;
}

export function jobLink(id: number): Html {
  return html`<a href="/jobs/${id}">#${id}</a>`;
}

/** An action's form: a POST with the page's CSRF token, its fields and one button; `confirm` asks first (app.js). */
export function actionForm(
  frame: Frame,
  action: { url: string; label: string; fields?: Record<string, string>; confirm?: string; danger?: boolean },
): Html {
  if (frame.readOnly) return html``;
  const fields = Object.entries(action.fields ?? {}).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  );
  return html`<form method="post" action="${action.url}" class="action" ${action.confirm === undefined ? '' : html`data-confirm="${action.confirm}"`}><input type="hidden" name="csrf" value="${frame.csrf}">${fields}<button type="submit" class="${action.danger === true ? 'secondary outline' : ''}">${action.label}</button></form>`;
}

/** A column heading; a numeric column's is aligned right, over its numbers. */
export type Heading = string | { numeric: string };

/** A table, or a line saying there is nothing to show. */
export function table(headers: readonly Heading[], rows: readonly Html[], empty: string): Html {
  if (rows.length === 0) return html`<p class="muted empty">${empty}</p>`;
  const heading = (h: Heading) =>
    typeof h === 'string' ? html`<th scope="col">${h}</th>` : html`<th scope="col" class="num">${h.numeric}</th>`;
  return html`<div class="overflow-auto"><table class="striped"><thead><tr>${headers.map(heading)}</tr></thead><tbody>${rows}</tbody></table></div>`;
}
