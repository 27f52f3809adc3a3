/**
 * The dashboard in a real browser (headless Chromium): a real supervisor
 * serves it on its HTTP port (`http.dashboard: true`, a token in
 * LEASEHOLD_DASHBOARD_TOKEN); jobs run, some fail. The operator logs in,
 * reads the counts, opens a failed job and its timeline, retries it and
 * watches it succeed, cancels a running job and watches it stop; a
 * read-only session has no action buttons; live updates stop while the tab
 * is hidden. Each page is screenshotted into artifacts/screenshots/.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { claimJobs, failIfHeld } from '../helpers/fenced-writes.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { holdsFor, waitFor } from '../helpers/wait.js';
import { countLivePolls, livePolls, liveSwaps, screenshot, setVisibility, usePages } from './browser.js';
import { seed, serve, TOKEN } from '../dashboard/helpers.js';
import { seedHistory } from '../dashboard/history.js';

useProcessGuard();
const newDir = tempDir('leasehold-dashboard-browser-');
const DEADLINE = 20_000;

const openPage = usePages();

async function newPage(): Promise<Page> {
  return (await openPage()).page;
}

/** The big number of a status on the overview. */
async function tile(page: Page, status: string): Promise<number> {
  return Number(await page.locator(`.tile [data-status="${status}"]`).textContent());
}

async function withSupervisor(work: (sup: SupervisorHandle, base: string) => Promise<void>): Promise<void> {
  const sup = await startSupervisor({
    dir: newDir(),
    env: { LEASEHOLD_DASHBOARD_TOKEN: TOKEN },
    http: { port: 0, dashboard: true },
    classes: [
      { name: 'ok', handler: 'succeed' },
      { name: 'flaky', handler: path.resolve('test/fixtures/handlers/fail-first.mjs') },
      { name: 'long', handler: 'respects-signal', max_runtime_seconds: 120 },
    ],
  });
  try {
    const listening = await sup.waitForEvent('HTTP_LISTENING');
    expect(listening).toMatchObject({ dashboard: true });
    await work(sup, `http://127.0.0.1:${listening.port as number}`);
  } finally {
    await sup.stop();
  }
}

describe('the dashboard in a browser', () => {
  it('log in, read the counts, open a failed job, retry it and watch it succeed, cancel a running job', async () => {
    await withSupervisor(async (sup, base) => {
      const ok = await Promise.all([1, 2, 3].map((n) => sup.queue.enqueue({ class: 'ok', payload: { n } })));
      const flaky = await Promise.all(
        [1, 2].map((n) =>
          sup.queue.enqueue({ class: 'flaky', payload: { to: `user${n}@example.com` }, maxRetries: 0 }),
        ),
      );
      const long = await sup.queue.enqueue({ class: 'long', payload: { ms: 300_000 } });
      for (const { id } of ok) await sup.waitForJob(id, 'SUCCEEDED');
      for (const { id } of flaky) await sup.waitForJob(id, 'FAILED');
      await sup.waitForJob(long.id, 'RUNNING');

      const page = await newPage();
      // No token yet: the login page, and a POST is refused.
      const first = await page.goto(`${base}/`);
      expect(first?.status()).toBe(401);
      await page.getByText('This dashboard needs its token').waitFor();
      expect((await page.request.post(`${base}/jobs/${flaky[0]!.id}/retry`, { maxRedirects: 0 })).status()).toBe(401);
      expect((await sup.queue.get(flaky[0]!.id))?.job.status).toBe('FAILED');

      // ?token= once: the session cookie, and the overview without the token in the URL.
      await page.goto(`${base}/?token=${TOKEN}`);
      expect(new URL(page.url()).search).toBe('');
      await page.locator('.tile').first().waitFor();
      expect(await tile(page, 'SUCCEEDED')).toBe(3);
      expect(await tile(page, 'FAILED')).toBe(2);
      expect(await tile(page, 'RUNNING')).toBe(1);
      await page.locator('tr[data-class="flaky"]').waitFor();
      await screenshot(page, 'overview');

      // The failed jobs, then one of them: its timeline says why.
      await page.locator('.tile.status-failed').click();
      await page.waitForURL(/\/jobs\?status=FAILED$/);
      await page.locator(`tr[data-job="${flaky[0]!.id}"]`).waitFor();
      await screenshot(page, 'jobs');
      await page.locator(`tr[data-job="${flaky[0]!.id}"] a`, { hasText: `#${flaky[0]!.id}` }).click();
      await page.waitForURL(new RegExp(`/jobs/${flaky[0]!.id}$`));
      const timeline = page.locator('section', { has: page.getByRole('heading', { name: 'Timeline' }) });
      await timeline.getByText('FAILED', { exact: true }).waitFor();
      expect(await timeline.textContent()).toMatch(/ENQUEUED.*CLAIMED.*STARTED.*FAILED/s);
      expect(await page.locator('table.fields').textContent()).toContain('UPSTREAM:DOWN: upstream is down');
      await screenshot(page, 'job-failed');

      // Retry, then watch the page update itself until the job has succeeded.
      await page.getByRole('button', { name: 'Retry' }).click();
      await page.getByText('Queued to run again.').waitFor();
      await page.locator('h1 .badge', { hasText: 'SUCCEEDED' }).waitFor();
      await page.locator('pre.json', { hasText: '"step": "sent"' }).waitFor();
      const retried = await sup.queue.get(flaky[0]!.id);
      expect(retried?.job.status).toBe('SUCCEEDED');
      expect(retried?.events.find((e) => e.event === 'RETRY_SCHEDULED')?.actor).toBe('dashboard@127.0.0.1');
      await screenshot(page, 'job-retried');

      // Cancel the running job: its worker aborts it, and the page shows it.
      await page.goto(`${base}/jobs/${long.id}`);
      await page.locator('h1 .badge', { hasText: 'RUNNING' }).waitFor();
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.locator('h1 .badge', { hasText: 'CANCELLED' }).waitFor();
      const cancelled = await sup.queue.get(long.id);
      expect(cancelled?.job.status).toBe('CANCELLED');
      expect(
        cancelled?.events.find((e) => e.event === 'CANCELLED' && e.actor === 'dashboard@127.0.0.1')?.detail,
      ).toContain('"stage":"requested"');
      await screenshot(page, 'job-cancelled');

      // The workers: this supervisor and its three children.
      await page.getByRole('link', { name: 'Workers' }).click();
      await page.locator('tr.supervisor').waitFor();
      expect(await page.locator('tr.child').count()).toBe(3);
      await screenshot(page, 'workers');

      // /metrics and /healthz stay as they were, without the token.
      expect((await fetch(`${base}/metrics`)).status).toBe(200);
      expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    });
  });

  it('the overview of a busy hour: throughput minute by minute, a crash loop and a paused class called out first, what jobs cost', async () => {
    const dir = newDir();
    const database = path.join(dir, 'queue.db');
    const { succeeded, failed } = await seedHistory(database, Date.now());
    const { base } = await serve(database, dir);
    const page = await newPage();
    await page.goto(`${base}/`);
    const legend = await page.locator('.legend').textContent();
    expect(legend).toContain(`${succeeded} succeeded`);
    expect(legend).toContain(`${failed} failed`);
    expect(await page.locator('svg.chart .bar-ok').count()).toBeGreaterThanOrEqual(55);
    expect(await page.locator('svg.chart .bar-failed').count()).toBeGreaterThanOrEqual(10);
    expect(await page.locator('.alert.trouble').textContent()).toMatch(
      /thumbnail is in a crash loop: 2 children ended abnormally/,
    );
    expect(await page.locator('.alert.paused').textContent()).toMatch(/report is paused by cli/);
    expect(await page.locator('tr', { hasText: 'UPSTREAM:TIMEOUT' }).count()).toBe(1);
    // What jobs cost: the report class (PDFs) first by CPU, and the hungriest attempt is one of its
    expect(await page.locator('section.cost table').first().locator('tbody tr').first().textContent()).toMatch(
      /^report/,
    );
    expect(
      await page.locator('section.cost section', { hasText: 'Hungriest' }).locator('tbody tr').first().textContent(),
    ).toContain('report');
    await screenshot(page, 'overview-hour');

    // The workers that died: each says how, in a word and a look of its own.
    await page.getByRole('link', { name: 'Workers' }).click();
    const killed = page.locator('.badge', { hasText: /^killed$/ });
    const crashed = page.locator('.badge', { hasText: /^crashed$/ });
    await killed.waitFor({ state: 'attached' });
    await crashed.waitFor({ state: 'attached' });
    const look = (badge: typeof killed) => badge.evaluate((element) => getComputedStyle(element).backgroundColor);
    expect(await look(killed)).not.toBe(await look(crashed));
    // Opened, the exited list stays open through the live updates that follow.
    await page.locator('summary', { hasText: 'Exited recently' }).click();
    await countLivePolls(page);
    await waitFor('a live update swapped in', async () => (await liveSwaps(page)) >= 1, {
      timeoutMs: DEADLINE,
      intervalMs: 100,
    });
    expect(await page.locator('details', { hasText: 'Exited recently' }).getAttribute('open')).not.toBeNull();
    await killed.waitFor();
    await screenshot(page, 'workers-exited');
  });

  it("a job's errors are shown in full on its page, the job's and each attempt's, line by line and within the window", async () => {
    const dir = newDir();
    const { base, queue } = await serve(path.join(dir, 'queue.db'), dir);
    const { store } = queue;
    // As long as a child writes (error_detail is cut at 500 characters), over several lines.
    const detail = (attempt: number) =>
      [
        `attempt ${attempt}: the upstream answered 502 Bad Gateway`,
        ...[1, 2, 3, 4, 5].map(
          (n) =>
            `step ${n} of the upload to https://upstream.example/api/v2/buckets/reports/objects/${attempt}-${n} failed`,
        ),
      ].join('\n');
    const { id } = await queue.enqueue({ class: 'upload', payload: {}, maxRetries: 1 });
    for (const attempt of [1, 2]) {
      const [job] = await claimJobs(store, { classes: ['upload'], ownerId: 'host/child-1', limit: 1, leaseMs: 60_000 });
      await failIfHeld(store, {
        id,
        leaseToken: job!.leaseToken,
        error: { code: 'UPSTREAM:BAD_GATEWAY', detail: detail(attempt), retryable: true },
        retryDelayMs: 0,
      });
    }
    expect((await store.jobGet({ id }))?.status).toBe('FAILED');

    const page = await newPage();
    await page.goto(`${base}/jobs/${id}`);
    const attempts = page
      .locator('section', { has: page.getByRole('heading', { name: 'Attempts' }) })
      .locator('tbody tr');
    const shown = [
      {
        where: 'the job',
        cell: page.locator('table.fields tr', { has: page.locator('th', { hasText: /^error$/ }) }).locator('td'),
        text: detail(2),
      },
      { where: 'attempt 1', cell: attempts.nth(0).locator('td').last(), text: detail(1) },
      { where: 'attempt 2', cell: attempts.nth(1).locator('td').last(), text: detail(2) },
    ];
    for (const { where, cell, text } of shown) {
      // The page's live region is swapped every 2 s: a cell read just as it went is detached, and a detached
      // element's innerText has no layout (its lines run together), so such a read is taken again.
      const seen = await waitFor(`${where}'s cell, on the page`, () =>
        cell.evaluate((element: HTMLElement) => {
          if (!element.isConnected) return null;
          const box = element.getBoundingClientRect();
          return {
            lines: element.innerText.split('\n').map((line) => line.trim()),
            inWindow: box.left >= 0 && box.right <= document.documentElement.clientWidth,
            clipped: element.scrollWidth > element.clientWidth,
          };
        }),
      );
      for (const line of text.split('\n'))
        expect(seen.lines, `${where}: ${JSON.stringify(seen.lines)}`).toContain(line);
      expect(seen, where).toMatchObject({ inWindow: true, clipped: false });
    }
    await screenshot(page, 'job-errors');
    // In the list, the code alone; its detail on hover.
    await page.goto(`${base}/jobs?class=upload`);
    expect(await page.locator(`tr[data-job="${id}"] code`).getAttribute('title')).toBe(detail(2));
  });

  it('a read-only session shows no action buttons', async () => {
    const dir = newDir();
    const { base, queue } = await serve(path.join(dir, 'queue.db'), dir, { readOnly: true });
    const ids = await seed(queue);
    const page = await newPage();
    for (const url of ['/', `/jobs/${ids.failedEmail}`, `/jobs/${ids.queued}`, '/jobs?status=FAILED']) {
      await page.goto(`${base}${url}`);
      await page.locator('#live').waitFor();
      expect(
        await page.locator('form[method="post"], button[type="submit"]:text-matches("Retry|Cancel")').count(),
        url,
      ).toBe(0);
      expect(await page.getByRole('link', { name: /retry/i }).count(), url).toBe(0);
    }
    await page.getByText('read-only', { exact: true }).waitFor();
    await screenshot(page, 'read-only');
  });

  it('a live update that arrives while a link is pressed waits: the release still follows the link', async () => {
    const dir = newDir();
    const { base, queue } = await serve(path.join(dir, 'queue.db'), dir);
    await seed(queue);
    const page = await newPage();
    await page.goto(`${base}/`);
    const tile = page.locator('#live a.tile', { hasText: 'ALL JOBS' });
    const box = (await tile.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    // An update lands between the press and the release, as one may every 2 s.
    await page.evaluate(
      () =>
        new Promise<void>((answered) => {
          document.addEventListener('htmx:afterRequest', () => answered(), { once: true });
          (window as unknown as { htmx: { trigger(to: string, event: string): void } }).htmx.trigger(
            '#live',
            'refresh',
          );
        }),
    );
    await page.mouse.up();
    await page.waitForURL(`${base}/jobs`, { timeout: 5_000 });
  });

  it('live updates poll about every 2 s while the tab is visible, none while hidden', async () => {
    const dir = newDir();
    const { base, queue } = await serve(path.join(dir, 'queue.db'), dir);
    await seed(queue);
    const page = await newPage();
    await page.goto(`${base}/`);
    await countLivePolls(page);
    await waitFor('two live updates', async () => (await livePolls(page)) >= 2, {
      timeoutMs: DEADLINE,
      intervalMs: 100,
    });

    // A job enqueued now shows up without a reload.
    await queue.enqueue({ class: 'late', payload: {} });
    await page.locator('tr[data-class="late"]').waitFor();

    const hiddenAt = await setVisibility(page, 'hidden');
    await holdsFor('no live update while hidden', async () => (await livePolls(page)) === hiddenAt, {
      forMs: 5_000,
      intervalMs: 250,
    });
    const shownAt = await setVisibility(page, 'visible');
    expect(shownAt).toBe(hiddenAt);
    await waitFor('a live update once visible again', async () => (await livePolls(page)) > shownAt, {
      timeoutMs: DEADLINE,
      intervalMs: 50,
    });
  });
});
