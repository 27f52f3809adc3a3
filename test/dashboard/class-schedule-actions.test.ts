/**
 * The dashboard's class and schedule actions (plain fetch, a real server on a
 * real SQLite file): pause and resume a class, the schedules page, and "run
 * now" for a schedule. Each is recorded with the dashboard as its actor, and
 * each is refused, writing nothing, without the CSRF token, without the
 * dashboard's token (when it has one), and on a read-only dashboard.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pausedClasses } from '../../src/queue/class-controls.js';
import { runSchedules, schedulesOf } from '../../src/queue/schedules.js';
import type { Queue } from '../../src/queue/queue.js';
import { systemClock } from '../../src/clock.js';
import { tempDir } from '../helpers/temp.js';
import { SCHEDULED_CLASSES, seed, serve, Session, textOf, TOKEN } from './helpers.js';

const newDir = tempDir('leasehold-dashboard-');

const CLASSES = SCHEDULED_CLASSES;

async function dashboard(options: { readOnly?: boolean; token?: string } = {}) {
  const dir = newDir();
  const served = await serve(path.join(dir, 'queue.db'), dir, { ...options, classes: CLASSES });
  const ids = await seed(served.queue);
  return { ...served, ids, session: new Session(served.base) };
}

async function snapshot(queue: Queue): Promise<string> {
  const jobs = await queue.store.jobList({ limit: 1000 });
  return JSON.stringify({
    jobs,
    paused: await pausedClasses(queue.store),
    schedules: await queue.store.scheduleList(),
  });
}

describe('dashboard: pause and resume a class', () => {
  it('the overview offers pause for a running class and resume for a paused one; both recorded with the dashboard as actor', async () => {
    const { session, queue } = await dashboard();
    const overview = await session.get('/');
    expect(overview.body).toContain('action="/classes/report/pause"');
    expect(overview.body).not.toContain('action="/classes/report/resume"');
    const paused = await session.act('/classes/report/pause');
    expect(paused.status).toBe(303);
    expect(paused.location).toBe('/');
    expect(await pausedClasses(queue.store)).toMatchObject([{ class: 'report', paused_by: 'dashboard@127.0.0.1' }]);
    const after = await session.get('/');
    expect(after.body).toContain('action="/classes/report/resume"');
    expect(after.body).not.toContain('action="/classes/report/pause"');
    expect(textOf(after.body)).toContain('report is paused by dashboard@127.0.0.1');

    expect((await session.act('/classes/report/resume')).status).toBe(303);
    expect(await pausedClasses(queue.store)).toEqual([]);
  });

  it('pausing a paused class, or resuming a running one, is refused with the reason', async () => {
    const { session } = await dashboard();
    await session.get('/');
    const resume = await session.act('/classes/email/resume');
    expect(resume.status).toBe(409);
    expect(textOf(resume.body)).toContain('class email is not paused');
    await session.act('/classes/email/pause');
    const again = await session.act('/classes/email/pause');
    expect(again.status).toBe(409);
    expect(textOf(again.body)).toContain('class email is already paused');
    expect((await session.act('/classes/no%20such/pause')).status).toBe(400);
  });
});

describe('dashboard: schedules', () => {
  it('the schedules page lists each schedule of the config: class, name, cron, next run, last run; a nav link leads to it', async () => {
    const { session, queue } = await dashboard();
    expect((await session.get('/')).body).toContain('href="/schedules"');
    await runSchedules(queue.store, schedulesOf(CLASSES), {
      clock: systemClock,
      actor: 'sup-a',
      payloadLimitBytes: 1024,
    });
    const page = await session.get('/schedules');
    expect(page.status).toBe(200);
    const row = page.body.split('</tr>').find((r) => r.includes('data-schedule="report/nightly"')) ?? '';
    const text = textOf(row);
    expect(text).toContain('report');
    expect(text).toContain('nightly');
    expect(text).toContain('30 3 * * *');
    const next = new Date();
    next.setUTCHours(3, 30, 0, 0);
    if (next.getTime() <= Date.now()) next.setUTCDate(next.getUTCDate() + 1);
    expect(row).toContain(`datetime="${next.toISOString()}"`);
    expect(text).toContain('never');
  });

  it("run now enqueues one job with the schedule's payload and priority, and leaves its cursor alone", async () => {
    const { session, queue } = await dashboard();
    const schedules = schedulesOf(CLASSES);
    await runSchedules(queue.store, schedules, { clock: systemClock, actor: 'sup-a', payloadLimitBytes: 1024 });
    const cursor = await queue.store.scheduleList();
    const before = (await queue.store.jobList({ class: 'report', limit: 100 })).length;
    expect((await session.get('/schedules')).body).toContain('action="/schedules/report/nightly/run"');
    const ran = await session.act('/schedules/report/nightly/run');
    expect(ran.status).toBe(303);
    const jobs = await queue.store.jobList({ class: 'report', limit: 100 });
    expect(jobs).toHaveLength(before + 1);
    const job = jobs[0]!;
    expect(ran.location).toBe(`/jobs/${job.id}?done=enqueued`);
    expect(job).toMatchObject({ status: 'QUEUED', priority: 4 });
    expect(JSON.parse(job.payload)).toEqual({ kind: 'digest' });
    expect((await queue.store.eventList({ jobId: job.id }))[0]).toMatchObject({
      event: 'ENQUEUED',
      actor: 'dashboard@127.0.0.1',
    });
    expect(await queue.store.scheduleList()).toEqual(cursor);
    expect((await session.act('/schedules/report/weekly/run')).status).toBe(404);
  });
});

describe('dashboard: the class and schedule actions are protected like the others', () => {
  const ACTIONS = ['/classes/report/pause', '/schedules/report/nightly/run'];

  it('without the CSRF token, or from another site: refused, nothing written', async () => {
    const { session, queue } = await dashboard();
    await session.get('/schedules');
    const before = await snapshot(queue);
    for (const url of ACTIONS) {
      expect((await session.post(url, {})).status, url).toBe(403);
      expect((await session.act(url, {}, { origin: 'http://evil.example' })).status, url).toBe(403);
    }
    expect(await snapshot(queue)).toBe(before);
  });

  it('read-only: no buttons, every action refused', async () => {
    const { session, queue } = await dashboard({ readOnly: true });
    for (const url of ['/', '/schedules']) expect((await session.get(url)).body, url).not.toContain('method="post"');
    const before = await snapshot(queue);
    for (const url of ACTIONS) expect((await session.act(url)).status, url).toBe(403);
    expect((await session.act('/classes/report/resume')).status).toBe(403);
    expect(await snapshot(queue)).toBe(before);
  });

  it('with a token: refused without it, taken with the session or a Bearer header', async () => {
    const { session, queue, base } = await dashboard({ token: TOKEN });
    const before = await snapshot(queue);
    for (const url of ACTIONS) expect((await session.post(url, {})).status, url).toBe(401);
    expect(await snapshot(queue)).toBe(before);
    await session.get(`/schedules?token=${TOKEN}`);
    await session.get('/schedules');
    expect((await session.act('/classes/report/pause')).status).toBe(303);
    const scripted = await fetch(`${base}/classes/report/resume`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
      redirect: 'manual',
    });
    expect(scripted.status).toBe(303);
    expect(await pausedClasses(queue.store)).toEqual([]);
  });
});
