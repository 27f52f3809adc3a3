import type { Queue } from '../../src/queue/queue.js';
import { TERMINAL_STATUSES, type ProducerStore } from '../../src/store/types.js';
import type { ChaosPayload } from '../chaos-handler.js';
import { LONG_CLASS, MAX_RETRIES, SHORT_CLASS } from './config.js';
import type { SeededRandom } from '../random.js';

const ENDED = new Set<string>(TERMINAL_STATUSES);

/** Long jobs that run ahead of the rest: they make good zombies, whose jobs are given to another child at once. */
export const ZOMBIE_BAIT_PRIORITY = 5;

/**
 * The jobs of a chaos run. Long jobs (20 ms to 1.2 s) are the ones damage
 * aims at: some misbehave on their first attempt, some wait in a subprocess,
 * all make one fenced write when their wait ends. Short jobs (under 5 ms)
 * arrive in bursts for a class that runs several at once, so that the
 * batched claim and the group commit are in flight when a child dies.
 */
export class Workload {
  readonly jobIds: number[] = [];
  readonly shortJobIds = new Set<number>();
  /** Jobs whose first attempt misbehaves in a way that gets its child killed (hang, busy). */
  readonly killerJobIds = new Set<number>();
  readonly trouble = { throw: 0, hang: 0, busy: 0 };
  readonly subprocesses = { jobs: 0 };

  constructor(
    private readonly queue: Queue,
    private readonly random: SeededRandom,
    private readonly effectsDir: string,
  ) {}

  get longJobs(): number {
    return this.jobIds.length - this.shortJobIds.size;
  }

  /**
   * How many of the run's jobs have not ended, from one read: one read per
   * status missed a job that a retry moved back to QUEUED between two of them.
   */
  async unfinished(store: ProducerStore): Promise<number> {
    const ours = new Set(this.jobIds);
    const jobs = await store.jobList({ limit: 1_000_000 });
    return jobs.filter((job) => ours.has(job.id) && !ENDED.has(job.status)).length;
  }

  async enqueueLong(count: number): Promise<void> {
    if (count <= 0) return;
    const payloads = Array.from({ length: count }, () => this.longPayload());
    const jobs = await this.queue.enqueueMany(
      payloads.map((payload) => ({
        class: LONG_CLASS,
        payload,
        maxRetries: MAX_RETRIES,
        priority: payload.ms >= 600 ? ZOMBIE_BAIT_PRIORITY : 0,
      })),
    );
    jobs.forEach((job, i) => {
      this.jobIds.push(job.id);
      const trouble = payloads[i]!.trouble;
      if (trouble === 'hang' || trouble === 'busy') this.killerJobIds.add(job.id);
    });
  }

  async enqueueShort(count: number): Promise<void> {
    if (count <= 0) return;
    const requests = Array.from({ length: count }, () => {
      const payload: ChaosPayload = { ms: this.random.int(0, 4), trouble: 'none', effects: this.effectsDir };
      return { class: SHORT_CLASS, payload, maxRetries: MAX_RETRIES };
    });
    for (const job of await this.queue.enqueueMany(requests)) {
      this.jobIds.push(job.id);
      this.shortJobIds.add(job.id);
    }
  }

  private longPayload(): ChaosPayload {
    const roll = this.random.next();
    const trouble: ChaosPayload['trouble'] =
      roll < 0.03 ? 'throw' : roll < 0.05 ? 'hang' : roll < 0.06 ? 'busy' : 'none';
    if (trouble !== 'none') this.trouble[trouble] += 1;
    const bait = trouble === 'none' && this.random.next() < 0.25;
    if (bait) return { ms: this.random.int(600, 1_200), trouble, effects: this.effectsDir, write: true };
    const subprocess = trouble === 'none' && this.random.next() < 0.3;
    if (subprocess) this.subprocesses.jobs += 1;
    return { ms: this.random.int(20, 500), trouble, effects: this.effectsDir, write: true, subprocess };
  }
}
