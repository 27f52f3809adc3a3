import { setTimeout as sleep } from 'node:timers/promises';

/** Poll a condition until it holds or the deadline passes; the error says what was awaited. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  { timeoutMs = 20_000, intervalMs = 25 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false && value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/**
 * The other half of waitFor: watch that something does not happen for
 * `forMs` (a paused class starting a job, say), checking it every
 * `intervalMs`; the error says what happened. The watch is the assertion.
 */
export async function holdsFor(
  what: string,
  probe: () => boolean | Promise<boolean>,
  { forMs, intervalMs = 50 }: { forMs: number; intervalMs?: number },
): Promise<void> {
  const until = Date.now() + forMs;
  while (Date.now() < until) {
    if (!(await probe())) throw new Error(`expected ${what} for ${forMs} ms, but it stopped holding`);
    await sleep(intervalMs);
  }
}
