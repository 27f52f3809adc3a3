/**
 * The dashboard's class, schedule and bulk actions in a real browser
 * (headless Chromium) over a real SQLite file: pause a class and resume it;
 * the schedules page and "run now"; a bulk cancel whose confirmation says
 * how many, after which exactly that many jobs changed. Each page is
 * screenshotted into artifacts/screenshots/.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pausedClasses } from '../../src/queue/class-controls.js';
import { tempDir } from '../helpers/temp.js';
import { screenshot, usePages } from './browser.js';
import { SCHEDULED_CLASSES, seed, serve } from '../dashboard/helpers.js';

const newDir = tempDir('leasehold-dashboard-actions-');

const newPage = usePages();

async function dashboard() {
  const dir = newDir();
  const served = await serve(path.join(dir, 'queue.db'), dir, { classes: SCHEDULED_CLASSES });
  await seed(served.queue);
  return served;
}

describe('the dashboard actions in a browser', () => {
  it('pause a class from the overview, then resume it', async () => {
    const { base, queue } = await dashboard();
    const { page, asked } = await newPage();
    await page.goto(`${base}/`);
    const row = page.locator('tr[data-class="report"]');
    await row.getByRole('button', { name: 'Pause' }).click();
    await row.locator('.badge', { hasText: 'paused' }).waitFor();
    expect(asked).toEqual([expect.stringContaining('Pause report?')]);
    expect(await page.locator('.alert.paused').textContent()).toContain('report is paused by dashboard@127.0.0.1');
    expect((await pausedClasses(queue.store)).map((p) => p.class)).toEqual(['report']);
    await screenshot(page, 'overview-paused');

    await row.getByRole('button', { name: 'Resume' }).click();
    await row.getByRole('button', { name: 'Pause' }).waitFor();
    expect(await page.locator('.alert.paused').count()).toBe(0);
    expect(await pausedClasses(queue.store)).toEqual([]);
  });

  it('the schedules page lists the schedule with its next run; run now enqueues one job', async () => {
    const { base, queue } = await dashboard();
    const { page } = await newPage();
    await page.goto(`${base}/`);
    await page.getByRole('link', { name: 'Schedules' }).click();
    const row = page.locator('tr[data-schedule="report/nightly"]');
    await row.waitFor();
    const next = new Date();
    next.setUTCHours(3, 30, 0, 0);
    if (next.getTime() <= Date.now()) next.setUTCDate(next.getUTCDate() + 1);
    expect(await row.locator('time').first().getAttribute('datetime')).toBe(next.toISOString());
    expect(await row.textContent()).toContain('30 3 * * *');
    await screenshot(page, 'schedules');

    const before = (await queue.store.jobList({ class: 'report', limit: 100 })).length;
    await row.getByRole('button', { name: 'Run now' }).click();
    await page.getByText('Enqueued by hand from its schedule.').waitFor();
    const jobs = await queue.store.jobList({ class: 'report', limit: 100 });
    expect(jobs).toHaveLength(before + 1);
    expect(page.url()).toBe(`${base}/jobs/${jobs[0]!.id}?done=enqueued`);
    expect(jobs[0]).toMatchObject({ status: 'QUEUED', priority: 4 });
    await screenshot(page, 'schedule-run-now');
  });

  it('bulk cancel: the confirmation says how many, and exactly that many jobs are cancelled', async () => {
    const { base, queue } = await dashboard();
    await queue.enqueueMany(Array.from({ length: 36 }, (_, n) => ({ class: 'email', payload: { n } })));
    const queued = async () => (await queue.store.jobList({ class: 'email', status: 'QUEUED', limit: 1_000 })).length;
    const shown = await queued(); // 36 and the seeded one
    const { page } = await newPage();
    await page.goto(`${base}/jobs?status=QUEUED&class=email`);
    await page.getByRole('button', { name: 'Cancel all of these QUEUED jobs…' }).click();
    const count = page.locator('article.confirm .count');
    expect(Number(await count.textContent())).toBe(shown);
    expect(await page.locator('article.confirm').textContent()).toContain(
      `Cancel ${shown} QUEUED job(s) of class email?`,
    );
    await screenshot(page, 'bulk-cancel-confirm');

    // A job that arrives while the confirmation is on screen is not among them.
    const { id: late } = await queue.enqueue({ class: 'email', payload: { late: true } });
    await page.getByRole('button', { name: `Cancel ${shown} job(s)` }).click();
    await page.getByText(`${shown} QUEUED job(s) of class email cancelled.`).waitFor();
    expect((await queue.store.jobList({ class: 'email', status: 'CANCELLED', limit: 1_000 })).length).toBe(shown);
    expect((await queue.store.jobGet({ id: late }))?.status).toBe('QUEUED');
    await screenshot(page, 'bulk-cancel-done');
  });
});
