import { vi } from 'vitest';

/** Advance fake time 1 ms at a time until `condition` holds; fails after `limitMs`. */
export async function until(what: string, condition: () => boolean, limitMs = 2_000): Promise<void> {
  for (let spent = 0; !condition(); spent++) {
    if (spent >= limitMs) throw new Error(`not within ${limitMs} ms: ${what}`);
    await vi.advanceTimersByTimeAsync(1);
  }
}
