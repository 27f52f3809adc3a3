import { execa, type ResultPromise } from 'execa';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { BUSY_TIMEOUT_MS } from '../../src/store/sqlite/connection.js';
import type { FaultInjector } from './fault-injector.js';

const HOLDER = fileURLToPath(new URL('./sqlite-lock-holder.js', import.meta.url));

/** Well past the busy timeout: the queue's writers give up waiting, again and again, and must live with it. */
export const LOCK_HOLD_MS = Math.max(2_000, 3 * BUSY_TIMEOUT_MS);

/** The SQLite fault: another process holds the write lock (BEGIN EXCLUSIVE) for LOCK_HOLD_MS. */
export class LockOuts implements FaultInjector {
  private holder: ResultPromise | undefined;
  private lockouts = 0;
  private lockedMs = 0;

  constructor(private readonly path: string) {}

  async inject(): Promise<void> {
    const holder = execa(process.execPath, [HOLDER, this.path, String(LOCK_HOLD_MS)], {
      reject: false,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    this.holder = holder;
    try {
      const locked = await Promise.race([
        once(createInterface({ input: holder.stdout }), 'line').then(() => true),
        holder.then(() => false),
      ]);
      if (!locked) throw new Error(`the lock holder exited without the lock: ${(await holder).stderr}`);
      const lockedAt = Date.now();
      await holder;
      this.lockouts += 1;
      this.lockedMs += Date.now() - lockedAt;
    } finally {
      this.holder = undefined;
    }
  }

  interrupt(): void {
    this.holder?.kill('SIGKILL');
  }

  async close(): Promise<void> {
    // nothing stays open between lock-outs
  }

  report(): Record<string, number> {
    return {
      lockouts: this.lockouts,
      locked_ms: this.lockedMs,
      hold_ms: LOCK_HOLD_MS,
      busy_timeout_ms: BUSY_TIMEOUT_MS,
    };
  }
}
