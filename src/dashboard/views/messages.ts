/** Pages that say one thing: an error, and the login. */
import { html } from 'hono/html';
import { layout, type Frame, type Html } from './layout.js';

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Log in',
  403: 'Refused',
  404: 'Not found',
  409: 'Refused',
  500: 'Internal error',
};

export function messagePage(
  frame: Frame,
  status: number,
  message: string,
  back?: { href: string; label: string },
): Html {
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
