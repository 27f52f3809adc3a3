/**
 * For the dashboard's HTTP suites: a queue with a job in each state, the
 * dashboard served for real on a free port (in this process, or by
 * `leasehold dashboard`), and a browser's session (its cookies and the CSRF
 * token of the page's forms) to send actions with plain fetch.
 */
import path from 'node:path';
import { afterEach } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { ClassConfig } from '../../src/config/schema.js';
import { DashboardServer } from '../../src/dashboard/server.js';
import { closeLogger, createLogger, type Logger } from '../../src/log.js';
import { openQueue, type Queue } from '../../src/queue/queue.js';
import { migrate } from '../../src/store/open.js';
import { claimJobs, completeIfHeld, failIfHeld } from '../helpers/fenced-writes.js';
import { readJsonLog } from '../helpers/json-log.js';

export const TOKEN = 'test-token-0123456789abcdef';

/** The ids of the seeded jobs, by what they are. */
export interface Seeded {
  /** SUCCEEDED, email; its payload has markup in it. */
  succeeded: number;
  /** FAILED, report, UPSTREAM:DOWN. */
  failed: number[];
  /** FAILED, email, SMTP:REJECTED. */
  failedEmail: number;
  /** QUEUED, email, idempotency key `welcome-42`. */
  queued: number;
  /** CLAIMED by a worker (owner `host/child-1`). */
  claimed: number;
}

export const MARKUP = '<script>alert("x")</script>';

/** A config's classes: report has a daily schedule with a payload and a priority (it never comes due while a test runs). */
export const SCHEDULED_CLASSES = parseConfig(
  `database: ./q.db\nclasses:\n  - name: report\n    handler: ./h.js\n    schedules:\n      - { name: nightly, cron: "30 3 * * *", timezone: UTC, payload: { kind: digest }, priority: 4 }\n  - name: email\n    handler: ./h.js\n`,
  '/tmp/queue.yaml',
).classes;

/** One job in each state a page shows, written as a worker would (claims, settles). */
export async function seed(queue: Queue): Promise<Seeded> {
  const { store } = queue;
  const claimOne = async (cls: string) => {
    const [job] = await claimJobs(store, { classes: [cls], ownerId: 'host/child-1', limit: 1, leaseMs: 60_000 });
    if (job === undefined) throw new Error(`nothing of ${cls} to claim`);
    return job;
  };
  const fail = async (cls: string, code: string) => {
    const { id } = await queue.enqueue({ class: cls, payload: { n: 1 }, maxRetries: 0 });
    const job = await claimOne(cls);
    await failIfHeld(store, {
      id,
      leaseToken: job.leaseToken,
      error: { code, detail: `${code} said no`, retryable: false },
      retryDelayMs: 0,
    });
    return id;
  };
  const { id: succeeded } = await queue.enqueue({ class: 'email', payload: { to: MARKUP } });
  const done = await claimOne('email');
  await completeIfHeld(store, {
    id: succeeded,
    leaseToken: done.leaseToken,
    result: JSON.stringify({ sent: true, id: 'm-1' }),
  });
  const failed = [await fail('report', 'UPSTREAM:DOWN'), await fail('report', 'UPSTREAM:DOWN')];
  const failedEmail = await fail('email', 'SMTP:REJECTED');
  const { id: claimed } = await queue.enqueue({ class: 'email', payload: { n: 2 } });
  await claimOne('email');
  const { id: queued } = await queue.enqueue({ class: 'email', payload: { n: 3 }, key: 'welcome-42' });
  return { succeeded, failed, failedEmail, queued, claimed };
}

export interface Served {
  base: string;
  queue: Queue;
  logFile: string;
  stop(): Promise<void>;
}

/** The dashboard in this process on a free port over the queue's database; stopped after the test. */
export async function serve(
  database: string,
  dir: string,
  options: { readOnly?: boolean; token?: string; classes?: readonly ClassConfig[] } = {},
): Promise<Served> {
  await migrate({ database });
  const queue = await openQueue({ database, actor: 'test' });
  const logFile = path.join(dir, `dashboard-${Date.now()}.log`);
  const logger: Logger = createLogger({
    level: 'info',
    file: logFile,
    maxSizeMb: 1,
    maxFiles: 1,
    supervisorId: 'dashboard',
    console: false,
  });
  const server = new DashboardServer({
    store: queue.store,
    database,
    classes: options.classes,
    readOnly: options.readOnly ?? false,
    token: options.token,
    logger,
    host: '127.0.0.1',
    port: 0,
  });
  const port = await server.start();
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      await server.stop();
      await queue.close().catch(() => undefined);
      await closeLogger(logger);
    })();
    return stopped;
  };
  running.push(stop);
  return { base: `http://127.0.0.1:${port}`, queue, logFile, stop };
}

const running: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of running.splice(0)) await stop();
});

/** The dashboard's log lines so far. */
export function logLines(file: string): Record<string, unknown>[] {
  return readJsonLog<Record<string, unknown>>(file);
}

/** A browser's cookies and the CSRF token of the forms on the pages it got. */
export class Session {
  private readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(readonly base: string) {}

  /** GET a page with this session's cookies (no redirects followed); keeps the cookies it sets and its forms' CSRF token. */
  async get(
    pathname: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: string; response: Response }> {
    const response = await fetch(`${this.base}${pathname}`, {
      headers: { cookie: this.cookieHeader(), ...headers },
      redirect: 'manual',
    });
    this.keep(response);
    const body = await response.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(body)?.[1];
    if (csrf !== undefined) this.csrf = csrf;
    return { status: response.status, body, response };
  }

  /** POST a form as a browser on this origin would (Origin and Sec-Fetch-Site of the dashboard itself), unless told otherwise. */
  async post(
    pathname: string,
    form: Record<string, string> = {},
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: string; location: string | null }> {
    const response = await fetch(`${this.base}${pathname}`, {
      method: 'POST',
      body: new URLSearchParams(form),
      headers: { cookie: this.cookieHeader(), origin: this.base, 'sec-fetch-site': 'same-origin', ...headers },
      redirect: 'manual',
    });
    this.keep(response);
    return { status: response.status, body: await response.text(), location: response.headers.get('location') };
  }

  /** POST with the CSRF token of the last page. */
  async act(pathname: string, form: Record<string, string> = {}, headers: Record<string, string> = {}) {
    return this.post(pathname, { csrf: this.csrf, ...form }, headers);
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
  }
}

/** What a page says in words: its text without tags, whitespace folded (to read what a person reads). */
export function textOf(body: string): string {
  return body
    .replace(/<script[\s\S]*?<\/script>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}
