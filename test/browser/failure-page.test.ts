/**
 * A failed job's page in a real browser (headless Chromium): a real
 * supervisor ran a handler that logged two lines and threw from a nested
 * function; the page shows the stack (the function and its file) and the
 * job's own log lines, in order. Screenshotted into artifacts/screenshots/.
 */
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { screenshot, usePages } from './browser.js';

useProcessGuard();
const newDir = tempDir('leasehold-failure-page-');

const newPage = usePages();

describe("a failed job's page in a browser", () => {
  it('shows the stack trace of the last attempt and the lines the job logged', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      http: { port: 0, dashboard: true },
      classes: [{ name: 'pay', handler: 'explained' }],
    });
    try {
      const { port } = await sup.waitForEvent('HTTP_LISTENING');
      const { id } = await sup.queue.enqueue({ class: 'pay', payload: { mode: 'nested' } });
      await sup.waitForJob(id, 'FAILED');

      const { page } = await newPage();
      await page.goto(`http://127.0.0.1:${port as number}/jobs/${id}`);
      const stack = page.locator('#stack details[open] pre.stack');
      await stack.waitFor();
      expect(await stack.textContent()).toMatch(/at chargeCardNested \(.*explained\.mjs:\d+:\d+\)/);
      expect(await stack.isVisible()).toBe(true);
      const logs = page.locator('#logs tbody tr');
      expect(await logs.allTextContents()).toEqual([
        expect.stringMatching(/1.*info.*charging the card \{"amount":1250\}/),
        expect.stringMatching(/1.*warn.*the bank is slow today/),
      ]);
      await screenshot(page, 'job-stack-and-logs');
    } finally {
      await sup.stop();
    }
  });
});
