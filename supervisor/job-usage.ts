import type { AttemptCost } from '../src/store/types.js';

/** One health-watch sample of a child (pidusage): its CPU time so far (user + system, ms) and its resident set. */
export interface UsageSample {
  ctimeMs: number;
  rssBytes: number;
}

/**
 * What the supervisor's own samples say a running job's child used, for the
 * attempts the child cannot report itself (killed or crashed): CPU from the
 * last sample before the job started to the last one while it ran, and the
 * highest resident set among the samples while it ran (the one that
 * triggered a memory kill included).
 */
export class JobUsage {
  private last: UsageSample | undefined;
  private peakRssBytes = 0;

  /** `before`: the child's last sample before the job started; none yet, and its CPU counts from the child's own start. */
  constructor(private readonly before: UsageSample | undefined) {}

  observe(sample: UsageSample): void {
    this.last = sample;
    this.peakRssBytes = Math.max(this.peakRssBytes, sample.rssBytes);
  }

  /** Undefined until a sample was taken while the job ran. */
  cost(): AttemptCost | undefined {
    if (this.last === undefined) return undefined;
    return { cpuMs: Math.max(0, this.last.ctimeMs - (this.before?.ctimeMs ?? 0)), peakRssBytes: this.peakRssBytes };
  }
}
