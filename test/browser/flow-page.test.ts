/**
 * A flow on the job page in a real browser (headless Chromium): a real
 * supervisor runs a root job, then a long gate job; three jobs wait on the
 * gate and a fan-in waits on them. The operator opens the fan-in, follows
 * a parent's link to it, and from there the gate's; cancels the gate, and
 * watches the live page of the parent it left go CANCELLED with
 * DEPENDENCY:CANCELLED. Screenshotted into artifacts/screenshots/.
 */
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { screenshot, usePages } from './browser.js';

useProcessGuard();
const newDir = tempDir('leasehold-flow-page-');

const newPage = usePages();

describe('a flow on the job page in a browser', () => {
  it("links a job's parents and children with their statuses, and follows them live", async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      http: { port: 0, dashboard: true },
      classes: [
        { name: 'ok', handler: 'succeed' },
        { name: 'long', handler: 'respects-signal', max_runtime_seconds: 120 },
      ],
    });
    try {
      const { port } = await sup.waitForEvent('HTTP_LISTENING');
      const base = `http://127.0.0.1:${port as number}`;
      const [root, gate, fan1, fan2, fan3, join] = (
        await sup.queue.enqueueMany([
          { class: 'ok', ref: 'root' },
          { class: 'long', ref: 'gate', dependsOn: ['root'], payload: { ms: 300_000 } },
          ...[1, 2, 3].map((n) => ({ class: 'ok', ref: `fan${n}`, dependsOn: ['gate'] })),
          { class: 'ok', dependsOn: ['fan1', 'fan2', 'fan3'] },
        ])
      ).map((job) => job.id) as [number, number, number, number, number, number];
      await sup.waitForJob(root, 'SUCCEEDED');
      await sup.waitForJob(gate, 'RUNNING');

      const { page } = await newPage();
      await page.goto(`${base}/jobs/${join}`);
      await page.locator('h1 .badge', { hasText: 'WAITING' }).waitFor();
      const parents = page.locator('#parents tbody tr');
      expect(await parents.allTextContents()).toEqual(
        [fan1, fan2, fan3].map((id) => expect.stringMatching(new RegExp(`^#${id}\\s*ok\\s*WAITING`))),
      );
      expect(await page.locator('#parents').textContent()).toContain('it is cancelled if one ends FAILED or CANCELLED');
      expect(await page.locator('table.fields').textContent()).toContain('3 parent(s) to end');
      await screenshot(page, 'job-flow-fan-in');

      // up to a parent: its own parents (the root done, the gate running) and its child, the fan-in
      await page
        .locator('#parents')
        .getByRole('link', { name: `#${fan1}` })
        .click();
      await page.waitForURL(new RegExp(`/jobs/${fan1}$`));
      expect(await page.locator('#parents tbody tr').allTextContents()).toEqual([
        expect.stringMatching(new RegExp(`^#${gate}\\s*long\\s*RUNNING`)),
      ]);
      expect(await page.locator('#children tbody tr').allTextContents()).toEqual([
        expect.stringMatching(new RegExp(`^#${join}\\s*ok\\s*WAITING`)),
      ]);
      await page
        .locator('#parents')
        .getByRole('link', { name: `#${gate}` })
        .click();
      await page.waitForURL(new RegExp(`/jobs/${gate}$`));
      expect(await page.locator('#parents tbody tr').allTextContents()).toEqual([
        expect.stringMatching(new RegExp(`^#${root}\\s*ok\\s*SUCCEEDED`)),
      ]);
      expect(await page.locator('#children tbody tr').count()).toBe(3);

      // the gate cancelled: its worker aborts it, and the live page of a child follows it down
      await page.goBack();
      await page.waitForURL(new RegExp(`/jobs/${fan1}$`));
      await sup.queue.cancel(gate);
      await page.locator('h1 .badge', { hasText: 'CANCELLED' }).waitFor();
      await page.locator('#parents .badge', { hasText: 'CANCELLED' }).waitFor();
      await page.locator('#children .badge', { hasText: 'CANCELLED' }).waitFor();
      expect(await page.locator('table.fields').textContent()).toContain(
        `DEPENDENCY:CANCELLED: parent job ${gate} ended CANCELLED`,
      );
      await screenshot(page, 'job-flow-cancelled');
      expect((await sup.queue.get(join))?.job).toMatchObject({
        status: 'CANCELLED',
        error_code: 'DEPENDENCY:CANCELLED',
      });
    } finally {
      await sup.stop();
    }
  });
});
