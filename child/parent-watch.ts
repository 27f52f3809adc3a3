import { Worker } from 'node:worker_threads';

/** How long the graceful orphan path gets before the watchdog thread takes the group down. */
const ORPHAN_GRACE_MS = 5_000;

/**
 * Notices that the supervisor is gone: the IPC channel closes (the usual
 * sign), or the parent pid changes (the child was re-parented after a
 * SIGKILL that somehow left the channel open). Either way `onGone` runs once.
 */
export class ParentWatch {
  private timer: NodeJS.Timeout | undefined;
  private fired = false;
  private readonly parentPid = process.ppid;
  private readonly onDisconnect = () => this.fire('IPC channel closed');

  constructor(
    private readonly onGone: (why: string) => void,
    private readonly intervalMs = 500,
  ) {}

  start(): void {
    if (this.timer !== undefined) return;
    process.on('disconnect', this.onDisconnect);
    if (!process.connected) this.fire('started without an IPC channel');
    this.timer = setInterval(() => {
      if (process.ppid !== this.parentPid) this.fire(`parent pid changed from ${this.parentPid} to ${process.ppid}`);
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    process.off('disconnect', this.onDisconnect);
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private fire(why: string): void {
    if (this.fired) return;
    this.fired = true;
    this.stop();
    this.onGone(why);
  }
}

/**
 * The backstop for a child whose main thread is blocked (a handler in a busy
 * loop cannot run ParentWatch): a worker thread that SIGKILLs the child's
 * process group once the supervisor has been gone for ORPHAN_GRACE_MS.
 */
export function startOrphanWatchdog(): void {
  const source = `
    const { workerData } = require('node:worker_threads');
    let goneSince;
    setInterval(() => {
      if (process.ppid === workerData.parentPid) return;
      goneSince ??= Date.now();
      if (Date.now() - goneSince < workerData.graceMs) return;
      try { process.kill(-process.pid, 'SIGKILL'); } catch {}
      process.kill(process.pid, 'SIGKILL');
    }, 250);
  `;
  const watchdog = new Worker(source, {
    eval: true,
    workerData: { parentPid: process.ppid, graceMs: ORPHAN_GRACE_MS },
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 },
  });
  watchdog.unref();
}
