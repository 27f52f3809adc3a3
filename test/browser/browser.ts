/**
 * A real browser for the dashboard suites: Debian's Chromium, headless,
 * driven by playwright-core; and the screenshots each test takes, kept under
 * artifacts/screenshots/ (git-ignored; CI keeps them as artifacts).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SCREENSHOTS = path.join(ROOT, 'artifacts/screenshots');

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
    ],
  });
}

/** How long a page waits for what a test looks for. */
const PAGE_DEADLINE_MS = 20_000;

/**
 * One Chromium for a test file, and a fresh browser context per page, closed
 * after each test. The pages answer yes to every confirm() dialog (the
 * actions ask first), and remember what they were asked.
 */
export function usePages(): () => Promise<{ page: Page; asked: string[] }> {
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return async () => {
    const context = await browser!.newContext({ viewport: { width: 1440, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(PAGE_DEADLINE_MS);
    const asked: string[] = [];
    page.on('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    return { page, asked };
  };
}

/** A full-page screenshot of what the page shows now, as artifacts/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Make the page's document hidden or visible again, as switching tabs does,
 * and return how many live-update requests it had sent until then (counted in
 * the page by htmx's beforeSend, which fires only for requests that go out).
 * Headless Chromium keeps every tab visible, so the test sets the property
 * the page's script reads, and fires the event a real switch fires.
 */
export async function setVisibility(page: Page, state: 'hidden' | 'visible'): Promise<number> {
  return page.evaluate((wanted) => {
    const before = (window as unknown as { livePolls: number }).livePolls;
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => wanted });
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => wanted === 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
    return before;
  }, state);
}

/** Count the page's live-update requests in `window.livePolls` (read by setVisibility and livePolls), and the updates swapped in, in `window.liveSwaps`. */
export async function countLivePolls(page: Page): Promise<void> {
  await page.evaluate(() => {
    const counter = window as unknown as { livePolls: number; liveSwaps: number };
    counter.livePolls = 0;
    counter.liveSwaps = 0;
    document.addEventListener('htmx:beforeSend', () => (counter.livePolls += 1));
    document.addEventListener('htmx:afterSettle', () => (counter.liveSwaps += 1));
  });
}

export function livePolls(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as { livePolls: number }).livePolls);
}

export function liveSwaps(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as { liveSwaps: number }).liveSwaps);
}
