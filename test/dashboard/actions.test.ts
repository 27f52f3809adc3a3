/**
 * The dashboard's actions and who may make them (plain fetch, a real server
 * on a real SQLite file): retry, cancel and the bulk retry are recorded with
 * the dashboard as their actor; a wrong-state action, a POST without the
 * token, without the CSRF token, from another origin, or on a read-only
 * dashboard is refused, and each refusal writes nothing.
 */
import { request } from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DashboardServer } from '../../src/dashboard/server.js';
import { createLogger } from '../../src/log.js';
import type { Queue } from '../../src/queue/queue.js';
import { claimJobs, failIfHeld } from '../helpers/fenced-writes.js';
import { tempDir } from '../helpers/temp.js';
import { seed, serve, Session, textOf, TOKEN } from './helpers.js';

const newDir = tempDir('leasehold-dashboard-');

async function seededDashboard(options: { readOnly?: boolean; token?: string } = {}) {
  const dir = newDir();
  const served = await serve(path.join(dir, 'queue.db'), dir, options);
  const ids = await seed(served.queue);
  return { ...served, ids, session: new Session(served.base) };
}

/** Every job row and every event: a refused action must leave both as they were. */
async function snapshot(queue: Queue): Promise<string> {
  const jobs = await queue.store.jobList({ limit: 1000 });
  const events = await Promise.all(jobs.map((job) => queue.store.eventList({ jobId: job.id })));
  return JSON.stringify({ jobs, events });
}

async function lastEvent(queue: Queue, id: number) {
  return (await queue.store.eventList({ jobId: id })).at(-1);
}

describe('dashboard actions', () => {
  it('retry: a FAILED job is queued again, recorded with the dashboard as its actor', async () => {
    const { session, queue, ids } = await seededDashboard();
    const page = await session.get(`/jobs/${ids.failedEmail}`);
    expect(page.body).toContain(`action="/jobs/${ids.failedEmail}/retry"`);
    const { status, location } = await session.act(`/jobs/${ids.failedEmail}/retry`);
    expect(status).toBe(303);
    expect(location).toBe(`/jobs/${ids.failedEmail}?done=retried`);
    expect((await queue.store.jobGet({ id: ids.failedEmail }))?.status).toBe('QUEUED');
    expect(await lastEvent(queue, ids.failedEmail)).toMatchObject({
      event: 'RETRY_SCHEDULED',
      actor: 'dashboard@127.0.0.1',
    });
    expect(textOf((await session.get(location!)).body)).toContain('Queued to run again.');
  });

  it('cancel: a queued job at once, a held one by request; both recorded with the dashboard as actor', async () => {
    const { session, queue, ids } = await seededDashboard();
    await session.get(`/jobs/${ids.queued}`);
    expect((await session.act(`/jobs/${ids.queued}/cancel`)).location).toBe(`/jobs/${ids.queued}?done=cancelled`);
    expect((await queue.store.jobGet({ id: ids.queued }))?.status).toBe('CANCELLED');
    expect(await lastEvent(queue, ids.queued)).toMatchObject({ event: 'CANCELLED', actor: 'dashboard@127.0.0.1' });
    expect((await session.act(`/jobs/${ids.claimed}/cancel`)).location).toBe(
      `/jobs/${ids.claimed}?done=cancel_requested`,
    );
    expect((await queue.store.jobGet({ id: ids.claimed }))?.cancel_requested_at).not.toBeNull();
  });

  it('a wrong-state action is refused with the reason, and nothing is written', async () => {
    const { session, queue, ids } = await seededDashboard();
    await session.get(`/jobs/${ids.failedEmail}`); // a page with a form: its CSRF token
    const before = await snapshot(queue);
    const retry = await session.act(`/jobs/${ids.succeeded}/retry`);
    expect(retry.status).toBe(409);
    expect(textOf(retry.body)).toContain(
      `job ${ids.succeeded} is SUCCEEDED, not FAILED: only FAILED jobs can be retried`,
    );
    const cancel = await session.act(`/jobs/${ids.succeeded}/cancel`);
    expect(cancel.status).toBe(409);
    expect(textOf(cancel.body)).toContain(`job ${ids.succeeded} already ended SUCCEEDED: there is nothing to cancel`);
    expect((await session.act('/jobs/999999/retry')).status).toBe(404);
    expect(await snapshot(queue)).toBe(before);
    // and the page offers neither action for it
    const page = await session.get(`/jobs/${ids.succeeded}`);
    expect(page.body).not.toContain('method="post"');
  });

  it('bulk retry: a confirmation with the count, then a POST that says how many were queued', async () => {
    const { session, queue, ids } = await seededDashboard();
    const confirm = await session.get('/retry-failed?class=report&error_code=UPSTREAM:DOWN');
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('data-count="2"');
    expect(textOf(confirm.body)).toContain('Retry 2 FAILED job(s) of class report with error UPSTREAM:DOWN?');
    const done = await session.act('/retry-failed', {
      class: 'report',
      error_code: 'UPSTREAM:DOWN',
      through_id: String(Math.max(...ids.failed)),
      count: '2',
    });
    expect(done.status).toBe(200);
    expect(textOf(done.body)).toContain('2 FAILED job(s) of class report with error UPSTREAM:DOWN queued to run again');
    for (const id of ids.failed)
      expect(await lastEvent(queue, id)).toMatchObject({ event: 'RETRY_SCHEDULED', actor: 'dashboard@127.0.0.1' });
    expect((await queue.store.jobGet({ id: ids.failedEmail }))?.status).toBe('FAILED');
    const none = await session.get('/retry-failed?class=report');
    expect(textOf(none.body)).toContain('There are no FAILED job(s) of class report to retry.');
  });

  it('an action is offered only where it applies: every retry link finds FAILED jobs, cancel only for jobs that can be cancelled', async () => {
    const { session, queue, ids } = await seededDashboard();
    const { store } = queue;
    // Error codes of the last hour that left no FAILED job: one retried and queued again, one cancelled while it ran.
    const { id: flaky } = await queue.enqueue({ class: 'video', payload: {}, maxRetries: 1 });
    const [first] = await claimJobs(store, { classes: ['video'], ownerId: 'host/child-2', limit: 1, leaseMs: 60_000 });
    await failIfHeld(store, {
      id: flaky,
      leaseToken: first!.leaseToken,
      error: { code: 'UPSTREAM:FLAKY', detail: 'try again', retryable: true },
      retryDelayMs: 60_000,
    });
    const { id: stopped } = await queue.enqueue({ class: 'video', payload: {} });
    const [held] = await claimJobs(store, { classes: ['video'], ownerId: 'host/child-2', limit: 1, leaseMs: 60_000 });
    await store.jobCancel({ id: stopped, actor: 'cli' });
    const cancelled = await failIfHeld(store, {
      id: stopped,
      leaseToken: held!.leaseToken,
      error: { code: 'CANCELLED:BY_OPERATOR', detail: 'cancelled', retryable: false },
      retryDelayMs: 0,
    });
    expect(cancelled.status).toBe('CANCELLED');

    const overview = await session.get('/');
    const errorRow = (code: string) =>
      overview.body.split('</tr>').find((row) => row.includes(`<code>${code}</code>`)) ?? '';
    expect(textOf(overview.body)).toMatch(/Top errors.*CANCELLED:BY_OPERATOR.*UPSTREAM:FLAKY/);
    for (const code of ['CANCELLED:BY_OPERATOR', 'UPSTREAM:FLAKY'])
      expect(errorRow(code), code).not.toContain('retry-failed');
    expect(errorRow('UPSTREAM:DOWN')).toContain('retry-failed');
    // Every bulk-retry link the pages offer leads to FAILED jobs to retry, never to an empty confirmation.
    const pages = [
      '/',
      '/jobs?status=FAILED',
      '/jobs?status=FAILED&class=report',
      '/jobs?status=FAILED&class=video',
      '/jobs?status=FAILED&error_code=CANCELLED:BY_OPERATOR',
    ];
    const links = new Set<string>();
    for (const url of pages)
      for (const m of (await session.get(url)).body.matchAll(/href="(\/retry-failed[^"]*)"/g))
        links.add(m[1]!.replace(/&amp;/g, '&'));
    expect(links.size).toBeGreaterThanOrEqual(4);
    for (const link of links) expect((await session.get(link)).body, link).toMatch(/data-count="[1-9]/);
    expect((await session.get('/jobs?status=FAILED&class=video')).body).not.toContain('retry-failed');

    // On a job's page: retry only when FAILED, cancel only while it can still be cancelled.
    await store.jobCancel({ id: ids.claimed, actor: 'cli' });
    const offered = async (id: number) =>
      [...(await session.get(`/jobs/${id}`)).body.matchAll(/<form method="post" action="\/jobs\/\d+\/(\w+)"/g)].map(
        (m) => m[1],
      );
    expect(await offered(ids.failedEmail)).toEqual(['retry']);
    expect(await offered(ids.queued)).toEqual(['cancel']);
    expect(await offered(flaky)).toEqual(['cancel']);
    for (const id of [ids.succeeded, ids.claimed, stopped]) expect(await offered(id), `job ${id}`).toEqual([]);
  });

  it('a POST without the CSRF token, with a wrong one, or from another site is refused, and nothing is written', async () => {
    const { session, queue, ids } = await seededDashboard();
    await session.get(`/jobs/${ids.failedEmail}`);
    expect(session.csrf).not.toBe('');
    const before = await snapshot(queue);
    const cases = [
      [{}, {}, 'no valid CSRF token'],
      [{ csrf: 'forged' }, {}, 'no valid CSRF token'],
      [
        { csrf: session.csrf },
        { origin: 'http://evil.example' },
        'cross-site request refused (Origin: http://evil.example)',
      ],
      [
        { csrf: session.csrf },
        { 'sec-fetch-site': 'cross-site' },
        'cross-site request refused (Sec-Fetch-Site: cross-site)',
      ],
    ] as const;
    for (const [form, headers, says] of cases) {
      const refused = await session.post(`/jobs/${ids.failedEmail}/retry`, form, headers);
      expect(refused.status, says).toBe(403);
      expect(textOf(refused.body)).toContain(says);
    }
    // another browser's token is no good either: each browser's is bound to its own cookie
    const other = new Session(session.base);
    await other.get(`/jobs/${ids.failedEmail}`);
    expect((await other.post(`/jobs/${ids.failedEmail}/retry`, { csrf: session.csrf })).status).toBe(403);
    expect(await snapshot(queue)).toBe(before);
  });

  it('read-only: no action buttons or links, and every action refused', async () => {
    const { session, queue, ids } = await seededDashboard({ readOnly: true });
    for (const url of ['/', `/jobs/${ids.failedEmail}`, `/jobs/${ids.queued}`, '/jobs?status=FAILED']) {
      const { status, body } = await session.get(url);
      expect(status, url).toBe(200);
      expect(body, url).not.toMatch(/method="post"|retry-failed|<button type="submit">(Retry|Cancel)/);
    }
    expect((await session.get('/')).body).toContain('read-only');
    expect((await session.get('/retry-failed?class=report')).status).toBe(403);
    const before = await snapshot(queue);
    const refused = await session.post(`/jobs/${ids.failedEmail}/retry`, { csrf: session.csrf });
    expect(refused.status).toBe(403);
    expect(textOf(refused.body)).toContain('this dashboard is read-only');
    expect((await session.act('/retry-failed', { class: 'report' })).status).toBe(403);
    expect(await snapshot(queue)).toBe(before);
  });

  it('with a token: pages and actions need it; ?token= logs a browser in with an HttpOnly SameSite=Strict cookie; a script sends it as Bearer', async () => {
    const { session, queue, ids, base } = await seededDashboard({ token: TOKEN });
    const login = await session.get('/');
    expect(login.status).toBe(401);
    expect(textOf(login.body)).toContain('This dashboard needs its token');
    const before = await snapshot(queue);
    const anonymous = await session.post(`/jobs/${ids.failedEmail}/retry`, {});
    expect(anonymous.status).toBe(401);
    expect(await snapshot(queue)).toBe(before);
    expect((await session.get('/?token=wrong-token-0123456789')).status).toBe(401);

    const entered = await session.get(`/jobs/${ids.failedEmail}?token=${TOKEN}`);
    expect(entered.status).toBe(303);
    expect(entered.response.headers.get('location')).toBe(`/jobs/${ids.failedEmail}`);
    const cookie = entered.response.headers.getSetCookie().find((line) => line.startsWith('leasehold_session='));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toContain(TOKEN);
    expect((await session.get(`/jobs/${ids.failedEmail}`)).status).toBe(200);
    expect((await session.act(`/jobs/${ids.failedEmail}/retry`)).status).toBe(303);

    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    expect((await fetch(`${base}/`, { headers: bearer(TOKEN) })).status).toBe(200);
    expect((await fetch(`${base}/`, { headers: bearer('wrong-token-0123456789') })).status).toBe(401);
    const scripted = await fetch(`${base}/jobs/${ids.failed[0]}/retry`, {
      method: 'POST',
      headers: bearer(TOKEN),
      redirect: 'manual',
    });
    expect(scripted.status).toBe(303);
    expect(await lastEvent(queue, ids.failed[0]!)).toMatchObject({
      event: 'RETRY_SCHEDULED',
      actor: 'dashboard@127.0.0.1',
    });
  });

  it('the login form sets the session too, and sends the browser back where it was going', async () => {
    const { session } = await seededDashboard({ token: TOKEN });
    const wrong = await session.post('/login', { token: 'nope', next: '/workers' });
    expect(wrong.status).toBe(401);
    const right = await session.post('/login', { token: TOKEN, next: '/workers' });
    expect(right.status).toBe(303);
    expect(right.location).toBe('/workers');
    expect((await session.get('/workers')).status).toBe(200);
    expect((await session.post('/login', { token: TOKEN, next: '//evil.example/' })).location).toBe('/');
    expect((await session.post('/login', { token: TOKEN }, { origin: 'http://evil.example' })).status).toBe(403);
  });

  it('without a token it answers only requests for a loopback host (no DNS rebinding)', async () => {
    const { base } = await seededDashboard();
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${base}/`, { headers: { host: `rebound.example:${new URL(base).port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
    expect((await fetch(`${base.replace('127.0.0.1', 'localhost')}/`)).status).toBe(200);
  });

  it('refuses to listen on a non-loopback address without a token, and takes no short token', async () => {
    const dir = newDir();
    const { queue } = await serve(path.join(dir, 'queue.db'), dir);
    const logger = createLogger({
      level: 'info',
      file: null,
      maxSizeMb: 1,
      maxFiles: 1,
      supervisorId: 'dashboard',
      console: false,
    });
    const settings = { store: queue.store, database: 'queue.db', classes: undefined, readOnly: false, logger, port: 0 };
    await expect(new DashboardServer({ ...settings, host: '0.0.0.0', token: undefined }).start()).rejects.toThrow(
      /the dashboard listens on 0\.0\.0\.0 only with a token/,
    );
    await expect(new DashboardServer({ ...settings, host: '127.0.0.1', token: 'short' }).start()).rejects.toThrow(
      /at least 16 characters/,
    );
  });
});
