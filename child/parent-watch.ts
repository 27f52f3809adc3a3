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
