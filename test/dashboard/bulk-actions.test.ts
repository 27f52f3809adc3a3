/**
 * The dashboard's bulk actions (plain fetch, a real server on a real SQLite
 * file): the confirmation says how many jobs the filter matches, and the
 * action then touches exactly those, never one that arrived after the
 * count was shown. Protected like every action.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Queue } from '../../src/queue/queue.js';
import { claimJobs, failIfHeld } from '../helpers/fenced-writes.js';
import { tempDir } from '../helpers/temp.js';
import { seed, serve, Session, textOf, TOKEN } from './helpers.js';

const newDir = tempDir('leasehold-dashboard-');

async function dashboard(options: { readOnly?: boolean; token?: string } = {}) {
  const dir = newDir();
  const served = await serve(path.join(dir, 'queue.db'), dir, options);
  const ids = await seed(served.queue);
  return { ...served, ids, session: new Session(served.base) };
}

/** The hidden fields of the page's form that posts to `action`. */
function formFields(body: string, action: string): Record<string, string> {
  const form = new RegExp(`<form method="post" action="${action}"[^>]*>(.*?)</form>`, 's').exec(body)?.[1];
  if (form === undefined) throw new Error(`no form posts to ${action}`);
  return Object.fromEntries(
    [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
  );
}

async function failOne(queue: Queue, cls: string, code: string): Promise<number> {
  const { id } = await queue.enqueue({ class: cls, payload: {}, maxRetries: 0 });
  const [job] = await claimJobs(queue.store, { classes: [cls], ownerId: 'host/child-9', limit: 1, leaseMs: 60_000 });
  await failIfHeld(queue.store, {
    id,
    leaseToken: job!.leaseToken,
    error: { code, detail: 'no', retryable: false },
    retryDelayMs: 0,
  });
  return id;
}

async function statusOf(queue: Queue, id: number) {
  return (await queue.store.jobGet({ id }))?.status;
}

describe('dashboard bulk actions', () => {
  it('bulk retry retries exactly the FAILED jobs its confirmation counted, not one that failed after', async () => {
    const { session, queue, ids } = await dashboard();
    const confirm = await session.get('/retry-failed?class=report');
    expect(textOf(confirm.body)).toContain('Retry 2 FAILED job(s) of class report?');
    const fields = formFields(confirm.body, '/retry-failed');
    expect(fields).toMatchObject({ class: 'report', count: '2' });
    const late = await failOne(queue, 'report', 'UPSTREAM:DOWN');
    const done = await session.post('/retry-failed', fields);
    expect(done.status).toBe(200);
    expect(textOf(done.body)).toContain('2 FAILED job(s) of class report queued to run again');
    for (const id of ids.failed) expect(await statusOf(queue, id)).toBe('QUEUED');
    expect(await statusOf(queue, late)).toBe('FAILED');
  });

  it('bulk cancel: the QUEUED jobs page offers it; the confirmation counts them; it cancels exactly those', async () => {
    const { session, queue } = await dashboard();
    const mine = (await queue.enqueueMany([{ class: 'email' }, { class: 'email' }, { class: 'report' }])).map(
      (job) => job.id,
    );
    const page = await session.get('/jobs?status=QUEUED&class=email');
    expect(page.body).toContain('href="/cancel-queued?class=email"');
    expect((await session.get('/jobs?status=FAILED')).body).not.toContain('cancel-queued');
    const confirm = await session.get('/cancel-queued?class=email');
    expect(textOf(confirm.body)).toContain('Cancel 3 QUEUED job(s) of class email?');
    const fields = formFields(confirm.body, '/cancel-queued');
    const { id: late } = await queue.enqueue({ class: 'email', payload: {} });
    const done = await session.post('/cancel-queued', fields);
    expect(done.status).toBe(200);
    expect(textOf(done.body)).toContain('3 QUEUED job(s) of class email cancelled');
    expect(await statusOf(queue, mine[0]!)).toBe('CANCELLED');
    expect((await queue.store.eventList({ jobId: mine[1]! })).at(-1)).toMatchObject({
      event: 'CANCELLED',
      actor: 'dashboard@127.0.0.1',
    });
    expect(await statusOf(queue, mine[2]!)).toBe('QUEUED'); // report: not in the filter
    expect(await statusOf(queue, late)).toBe('QUEUED');
    expect(textOf((await session.get('/cancel-queued?class=email')).body)).toContain(
      'Cancel 1 QUEUED job(s) of class email?',
    );
  });

  it('a bulk POST without the bounds its confirmation gives is refused, and writes nothing', async () => {
    const { session, queue } = await dashboard();
    await session.get('/retry-failed');
    const before = JSON.stringify(await queue.store.jobList({ limit: 100 }));
    const retry = await session.act('/retry-failed', { class: 'report' });
    expect(retry.status).toBe(400);
    expect(textOf(retry.body)).toContain('through_id must be a positive integer');
    expect((await session.act('/cancel-queued', { through_id: '99' })).status).toBe(400);
    expect(JSON.stringify(await queue.store.jobList({ limit: 100 }))).toBe(before);
  });

  it('protected like every action: read-only, the CSRF token, the dashboard token', async () => {
    const readOnly = await dashboard({ readOnly: true });
    expect((await readOnly.session.get('/jobs?status=QUEUED')).body).not.toContain('cancel-queued');
    expect((await readOnly.session.get('/cancel-queued')).status).toBe(403);
    expect((await readOnly.session.act('/cancel-queued', { through_id: '99', count: '9' })).status).toBe(403);
    expect(await statusOf(readOnly.queue, readOnly.ids.queued)).toBe('QUEUED');

    const open = await dashboard();
    await open.session.get('/cancel-queued');
    const fields = formFields((await open.session.get('/cancel-queued')).body, '/cancel-queued');
    expect((await open.session.post('/cancel-queued', { ...fields, csrf: 'forged' })).status).toBe(403);
    expect((await open.session.post('/cancel-queued', fields, { origin: 'http://evil.example' })).status).toBe(403);
    expect(await statusOf(open.queue, open.ids.queued)).toBe('QUEUED');

    const locked = await dashboard({ token: TOKEN });
    expect((await locked.session.post('/cancel-queued', { through_id: '99', count: '9' })).status).toBe(401);
    const scripted = await fetch(`${locked.base}/cancel-queued`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
      body: new URLSearchParams({ through_id: '99', count: '9' }),
    });
    expect(scripted.status).toBe(200);
    expect(await statusOf(locked.queue, locked.ids.queued)).toBe('CANCELLED');
  });
});
