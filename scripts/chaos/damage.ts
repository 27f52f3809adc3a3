import { setTimeout as sleep } from 'node:timers/promises';
import type { ProducerStore, WorkerRow } from '../../src/store/types.js';
import { isPidAlive } from '../../src/pids.js';
import { LONG_CLASS, SHORT_CLASS } from './config.js';
import { readStat } from '../proc.js';
import type { SeededRandom } from '../random.js';
import type { ProcessLedger } from './process-ledger.js';
import type { Supervisors } from './supervisors.js';
import { ZOMBIE_BAIT_PRIORITY } from './workload.js';

/** How long a SIGSTOPped child is held waiting for its lease to be taken back. */
const ZOMBIE_WAIT_MS = 20_000;
/** How long the program follows a killed child's job until another child claims it. */
const RECLAIM_WAIT_MS = 30_000;
/** How long a short-class kill looks for a child holding jobs of the burst before it takes any child of the class. */
const SHORT_HOLDER_WAIT_MS = 200;

/** A child that was SIGSTOPped mid-job, kept stopped until its lease was taken back, then resumed. */
export interface Zombie {
  jobId: number;
  /** The attempt and lease token it held when it was stopped (stale once resumed). */
  attempt: number;
  leaseToken: string;
  pid: number;
  resumedAt: number;
}

interface BusyChild {
  child: WorkerRow;
  jobId: number;
  attempt: number;
  priority: number;
  leaseToken: string;
}

/**
 * The damage done to the children: SIGKILL mid-job, SIGSTOP until the lease
 * is taken back (a zombie), SIGKILL in the middle of a burst of short
 * jobs. Deliberate damage aims only at jobs on their first attempt, so that
 * no job is chased from attempt to attempt.
 */
export class Damage {
  readonly counts = { child_kills: 0, short_child_kills: 0, zombie_attempts: 0, zombies: 0 };
  /** Why a zombie attempt made none: the child died while stopped, or its lease was not taken back in time. */
  readonly zombieMisses = { died_stopped: 0, not_taken_back: 0 };
  readonly zombies: Zombie[] = [];
  /** Every pid ever SIGSTOPped: the supervisor may rightly kill these. */
  readonly everStopped = new Set<number>();
  /** For each child SIGKILL: until its job was back in the queue, and until another child claimed it. */
  readonly requeueMs: number[] = [];
  readonly reclaimMs: number[] = [];
  /** Pids SIGSTOPped right now. */
  readonly stopped = new Set<number>();
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly store: ProducerStore,
    private readonly random: SeededRandom,
    private readonly supervisors: Supervisors,
    private readonly ledger: ProcessLedger,
  ) {}

  /** SIGKILL a child of the long class mid-job; follow its job until another child claims it. */
  async killChild(): Promise<void> {
    const target = this.random.pick((await this.busyChildren()).filter((busy) => busy.child.class === LONG_CLASS));
    if (target === undefined || !this.sigkill(target.child.pid)) return;
    const killedAt = Date.now();
    this.counts.child_kills += 1;
    this.track(this.followReclaim(target, killedAt));
  }

  /**
   * SIGKILL a child of the short class right after a burst: one seen holding
   * jobs of it (in the middle of a batch), else any. With 8 slots a child
   * can run a burst out before a kill aimed by time alone lands.
   */
  async killShortChild(): Promise<void> {
    const deadline = Date.now() + SHORT_HOLDER_WAIT_MS;
    let target: WorkerRow | undefined;
    while (target === undefined && Date.now() < deadline) {
      target = this.random.pick(await this.shortHolders());
      if (target === undefined) await sleep(5);
    }
    target ??= this.random.pick(
      (await this.supervisors.children()).filter((child) => child.class === SHORT_CLASS && child.state !== 'starting'),
    );
    if (target !== undefined && this.sigkill(target.pid)) this.counts.short_child_kills += 1;
  }

  /** The children of the short class that hold a job now (claimed: a short job's start is written with its outcome). */
  private async shortHolders(): Promise<WorkerRow[]> {
    const byId = new Map((await this.supervisors.children()).map((c) => [c.id, c]));
    const held = await this.store.jobList({ status: 'CLAIMED', class: SHORT_CLASS, limit: 100 });
    return [...new Set(held.flatMap((job) => (job.owner_id === null ? [] : [byId.get(job.owner_id)])))].filter(
      (child): child is WorkerRow => child !== undefined && !this.stopped.has(child.pid),
    );
  }

  /** SIGKILL a child, noted in the ledger as a death (it may cut a record short); false when it was already gone. */
  private sigkill(pid: number): boolean {
    const startTicks = readStat(pid)?.startTicks;
    if (!kill(pid, 'SIGKILL')) return false;
    this.ledger.noteDeath({ pid, startTicks, at: Date.now(), how: 'was SIGKILLed by the chaos program' });
    return true;
  }

  /**
   * SIGSTOP a child running a bait job until its lease has been taken back, then SIGCONT it: a zombie.
   * Not until the job is given to another child: the supervisor kills a stopped child about 3.5 s
   * after its last heartbeat, and under load no child was free to claim the job before then, so in
   * one CI run none of 10 stopped children became a zombie. A token taken back fences the same.
   */
  async makeZombie(): Promise<void> {
    if (this.stopped.size > 0) return;
    const target = this.random.pick(
      (await this.busyChildren()).filter((busy) => busy.priority === ZOMBIE_BAIT_PRIORITY),
    );
    if (target === undefined) return;
    const { pid } = target.child;
    if (!kill(pid, 'SIGSTOP')) return;
    this.stopped.add(pid);
    this.everStopped.add(pid);
    this.counts.zombie_attempts += 1;
    this.track(this.holdZombie(target));
  }

  /** SIGCONT every child stopped now (on the way out early: a stopped child cannot notice that its supervisor is gone). */
  resumeStopped(): void {
    for (const pid of this.stopped) kill(pid, 'SIGCONT');
  }

  /** Wait until the follow-ups of the damage done have ended. */
  async settle(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private async holdZombie(target: BusyChild): Promise<void> {
    const { pid } = target.child;
    const deadline = Date.now() + ZOMBIE_WAIT_MS;
    let takenBack = false;
    try {
      while (!takenBack && Date.now() < deadline && isPidAlive(pid)) {
        const job = await this.store.jobGet({ id: target.jobId });
        // A lease taken back leaves its token on the row, QUEUED, until another child claims the job.
        takenBack = job !== undefined && (job.lease_token !== target.leaseToken || job.status === 'QUEUED');
        if (!takenBack) await sleep(20);
      }
    } finally {
      const resumedAt = Date.now();
      // Read before the SIGCONT, which a dead child not yet reaped accepts.
      const alive = isPidAlive(pid);
      if (!takenBack || !alive) this.zombieMisses[alive ? 'not_taken_back' : 'died_stopped'] += 1;
      if (kill(pid, 'SIGCONT') && alive && takenBack) {
        this.counts.zombies += 1;
        this.zombies.push({
          jobId: target.jobId,
          attempt: target.attempt,
          leaseToken: target.leaseToken,
          pid,
          resumedAt,
        });
      }
      this.stopped.delete(pid);
    }
  }

  private async followReclaim(target: BusyChild, killedAt: number): Promise<void> {
    const deadline = killedAt + RECLAIM_WAIT_MS;
    while (Date.now() < deadline) {
      const job = await this.store.jobGet({ id: target.jobId });
      if (job !== undefined && job.attempts > target.attempt && job.claimed_at !== null) {
        const killedAttempt = (await this.store.attemptList({ jobId: target.jobId })).find(
          (a) => a.attempt === target.attempt,
        );
        if (killedAttempt?.finished_at != null) this.requeueMs.push(killedAttempt.finished_at - killedAt);
        this.reclaimMs.push(job.claimed_at - killedAt);
        return;
      }
      if (job !== undefined && (job.status === 'SUCCEEDED' || job.status === 'FAILED')) return;
      await sleep(20);
    }
  }

  /** Children of the live supervisor running a job on its first attempt right now (not stopped), and the job. */
  private async busyChildren(): Promise<BusyChild[]> {
    const byId = new Map((await this.supervisors.children()).map((c) => [c.id, c]));
    const running = await this.store.jobList({ status: 'RUNNING', limit: 100 });
    return running.flatMap((job) => {
      const child = job.owner_id === null ? undefined : byId.get(job.owner_id);
      if (child === undefined || this.stopped.has(child.pid) || job.attempts !== 1 || job.lease_token === null)
        return [];
      return [{ child, jobId: job.id, attempt: job.attempts, priority: job.priority, leaseToken: job.lease_token }];
    });
  }

  private track(work: Promise<void>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }
}

/** Send a signal; false when the process is already gone. */
function kill(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}
