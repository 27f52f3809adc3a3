/**
 * Who may use the dashboard, and how a browser proves it.
 *
 * - Without a token it listens on a loopback address only, and answers only
 *   requests that name a loopback host (a page on another site that rebinds
 *   its own name to 127.0.0.1 gets nothing).
 * - With a token, every page and action needs it: `?token=` once sets an
 *   HttpOnly SameSite=Strict cookie (a digest of the token, never the token)
 *   and reloads without the parameter; the login form does the same; a
 *   script sends `Authorization: Bearer <token>`.
 * - An action is a POST that carries the CSRF token of its form (bound to a
 *   per-browser cookie) and comes from this origin (Sec-Fetch-Site, Origin).
 *   A Bearer request needs neither: a browser never adds that header on its
 *   own, so no other site can make one.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { exposureProblem, isLoopback, tokenProblem } from '../config/exposure.js';
import { InvalidInputError } from '../errors.js';

const SESSION_COOKIE = 'leasehold_session';
const CSRF_COOKIE = 'leasehold_csrf';
const COOKIE = { httpOnly: true, sameSite: 'Strict', path: '/' } as const;

/** What a request carries past these checks, for the pages. */
export interface DashboardEnv {
  Variables: {
    /** The CSRF token each form of the page sends back. */
    csrf: string;
    /** Admitted by an Authorization header (a script), not by a cookie. */
    bearer: boolean;
  };
}

/** Answers a refused request with a page that says why. */
export type Refuse = (
  c: Context<DashboardEnv>,
  status: 400 | 401 | 403,
  message: string,
) => Response | Promise<Response>;

/** A token as given (`--token`, the environment), checked; undefined for none. */
export function checkToken(token: string | undefined): string | undefined {
  if (token === undefined || token === '') return undefined;
  const problem = tokenProblem(token);
  if (problem !== undefined) throw new InvalidInputError('DASHBOARD', problem);
  return token;
}

/** Refuse an address other than loopback without a token (the rule lives with the config check's). */
export function checkListenAddress(host: string, token: string | undefined): void {
  const problem = exposureProblem(host, token);
  if (problem !== undefined) throw new InvalidInputError('DASHBOARD', problem);
}

/** Equal strings, compared in constant time (as digests, so lengths leak nothing either). */
function sameSecret(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}

function hmac(key: string | Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('base64url');
}

/** Where a login may send the browser back to: a path of this dashboard, nothing else. */
export function localPath(next: string | undefined): string {
  return next !== undefined && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

export interface Access {
  /** The pages and actions need this token; undefined: none needed (loopback only). */
  token: string | undefined;
  readOnly: boolean;
}

export class Guard {
  private readonly csrfKey = randomBytes(32);
  private readonly session: string | undefined;

  constructor(
    private readonly access: Access,
    private readonly refuse: Refuse,
  ) {
    this.session = access.token === undefined ? undefined : hmac(access.token, 'leasehold dashboard session');
  }

  get tokenRequired(): boolean {
    return this.access.token !== undefined;
  }

  /** A token given by the login form or `?token=` is right; on success the browser gets its session cookie. */
  logIn(c: Context<DashboardEnv>, given: string): boolean {
    if (this.access.token === undefined || this.session === undefined || !sameSecret(given, this.access.token))
      return false;
    setCookie(c, SESSION_COOKIE, this.session, COOKIE);
    return true;
  }

  /**
   * Admit the request, or refuse it: without a token, only a loopback Host;
   * with one, a session cookie or a Bearer header (`?token=` on a GET logs
   * in and reloads without it). `loginPage` answers a browser that has none.
   */
  admit(
    loginPage: (c: Context<DashboardEnv>, problem?: string) => Response | Promise<Response>,
  ): MiddlewareHandler<DashboardEnv> {
    return async (c, next) => {
      c.set('bearer', false);
      const token = this.access.token;
      if (token === undefined) {
        const host = new URL(c.req.url).hostname;
        if (!isLoopback(host))
          return this.refuse(c, 403, `this dashboard answers only on a loopback address, not ${JSON.stringify(host)}`);
        return next();
      }
      const bearer = /^Bearer (.+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
      if (bearer !== undefined) {
        if (!sameSecret(bearer, token)) return this.refuse(c, 401, 'wrong token');
        c.set('bearer', true);
        return next();
      }
      const given = c.req.query('token');
      if (given !== undefined && c.req.method === 'GET') {
        if (!this.logIn(c, given)) return loginPage(c, 'wrong token');
        const url = new URL(c.req.url);
        url.searchParams.delete('token');
        return c.redirect(`${url.pathname}${url.search}`, 303);
      }
      const cookie = getCookie(c, SESSION_COOKIE);
      if (cookie !== undefined && this.session !== undefined && sameSecret(cookie, this.session)) return next();
      return c.req.method === 'GET' || c.req.method === 'HEAD'
        ? loginPage(c)
        : this.refuse(c, 401, 'this dashboard needs its token: log in, or send Authorization: Bearer <token>');
    };
  }

  /** Give the browser its CSRF cookie (once), and the page the token its forms send back. */
  csrf(): MiddlewareHandler<DashboardEnv> {
    return async (c, next) => {
      let browser = getCookie(c, CSRF_COOKIE);
      if (browser === undefined || !/^[\w-]{20,}$/.test(browser)) {
        browser = randomBytes(18).toString('base64url');
        setCookie(c, CSRF_COOKIE, browser, COOKIE);
      }
      c.set('csrf', hmac(this.csrfKey, browser));
      return next();
    };
  }

  /** A request from this origin: Sec-Fetch-Site and Origin, where the browser sends them, say so. */
  sameOrigin(c: Context<DashboardEnv>): string | undefined {
    const site = c.req.header('sec-fetch-site');
    if (site !== undefined && site !== 'same-origin') return `cross-site request refused (Sec-Fetch-Site: ${site})`;
    const origin = c.req.header('origin');
    if (origin !== undefined && !isOrigin(origin, c.req.url)) return `cross-site request refused (Origin: ${origin})`;
    return undefined;
  }

  /** Actions: refused when read-only; from a browser, only from this origin and with the form's CSRF token. */
  actions(): MiddlewareHandler<DashboardEnv> {
    return async (c, next) => {
      if (c.req.method !== 'POST') return next();
      if (this.access.readOnly) return this.refuse(c, 403, 'this dashboard is read-only: it takes no actions');
      if (c.get('bearer')) return next();
      const crossSite = this.sameOrigin(c);
      if (crossSite !== undefined) return this.refuse(c, 403, crossSite);
      const form = await c.req.parseBody();
      const sent = typeof form.csrf === 'string' ? form.csrf : '';
      if (!sameSecret(sent, c.get('csrf')))
        return this.refuse(c, 403, 'the form carries no valid CSRF token: reload the page and try again');
      return next();
    };
  }
}

function isOrigin(origin: string, requestUrl: string): boolean {
  try {
    return new URL(origin).host === new URL(requestUrl).host;
  } catch {
    return false; // "null", or not a URL
  }
}
