/** Pages that say one thing: an error, the login, and the bulk retry's confirmation and result. */
import { html } from 'hono/html';
import type { FailedFilter } from '../../store/types.js';
import { jobsUrl } from '../params.js';
import { actionForm, layout, type Frame, type Html } from './layout.js';

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Log in',
  403: 'Refused',
  404: 'Not found',
  409: 'Refused',
  500: 'Internal error',
};

export function messagePage(frame: Frame, status: number, message: string, back?: { href: string; label: string }): Html {
  return layout(
    { ...frame, title: TITLES[status] ?? 'Error' },
    html`<article class="message status-${status}"><header><strong>${status} ${TITLES[status] ?? 'Error'}</strong></header><p>${message}</p><footer><a href="${back?.href ?? '/'}">${back?.label ?? 'Back to the overview'}</a></footer></article>`,
  );
}

export function loginPage(frame: Frame, next: string, problem: string | undefined): Html {
  return layout(
    { ...frame, title: 'Log in', nav: undefined },
    html`<article class="login"><header><strong>This dashboard needs its token</strong></header>
${problem === undefined ? '' : html`<p class="bad" role="alert">${problem}</p>`}
<form method="post" action="/login"><input type="hidden" name="next" value="${next}"><label>Token <input type="password" name="token" autocomplete="current-password" required autofocus></label><button type="submit">Log in</button></form>
<footer><small class="muted">Or open any page once with <code>?token=…</code>; scripts send <code>Authorization: Bearer …</code>.</small></footer></article>`,
  );
}

/** Which FAILED jobs a bulk retry takes, in words. */
function describeFilter(filter: FailedFilter): string {
  const parts = ['FAILED job(s)'];
  if (filter.class !== undefined) parts.push(`of class ${filter.class}`);
  if (filter.errorCode !== undefined) parts.push(`with error ${filter.errorCode}`);
  return parts.join(' ');
}

export function confirmRetryPage(frame: Frame, filter: FailedFilter, count: number): Html {
  const list = jobsUrl({ status: 'FAILED', class: filter.class, errorCode: filter.errorCode });
  const fields: Record<string, string> = {};
  if (filter.class !== undefined) fields.class = filter.class;
  if (filter.errorCode !== undefined) fields.error_code = filter.errorCode;
  const body =
    count === 0
      ? html`<p>There are no ${describeFilter(filter)} to retry.</p>`
      : html`<p>Retry <strong class="count" data-count="${count}">${count}</strong> ${describeFilter(filter)}? Each is queued to run once more, now, and the retry is recorded in its timeline.</p>${actionForm(frame, { url: '/retry-failed', label: `Retry ${count} job(s)`, fields })}`;
  return layout({ ...frame, title: 'Retry failed jobs' }, html`<article class="confirm"><header><strong>Retry failed jobs</strong></header>${body}<footer><a href="${list}">See them first</a> · <a href="/">Back to the overview</a></footer></article>`);
}

export function retryDonePage(frame: Frame, filter: FailedFilter, count: number): Html {
  return layout(
    { ...frame, title: 'Retried' },
    html`<article class="alert notice" role="status"><p><strong class="count" data-count="${count}">${count}</strong> ${describeFilter(filter)} queued to run again.</p><footer><a href="${jobsUrl({ class: filter.class })}">See the jobs</a> · <a href="/">Back to the overview</a></footer></article>`,
  );
}
