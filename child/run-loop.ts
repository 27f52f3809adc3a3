import type { LeaseholdError } from '../src/errors.js';
import { classRateLimit } from '../src/queue/class-controls.js';
import type { FlightRecorder } from '../src/ipc/flight-record.js';
import type { ChildToSupervisor } from '../src/ipc/protocol.js';
import { START_MARGIN_MS } from '../src/store/rate-limit.js';
import type { ClaimedJob, RateLimit, SettleResult } from '../src/store/types.js';
import type { WakeWatch } from '../src/store/wake-watch.js';
import { CostMeter } from './attempt-meter.js';
import { FLUSH_AFTER_MS, GroupCommit, type PendingOutcome, type SettleStore } from './group-commit.js';
import { IdleWait } from './idle-wait.js';
import { Deadlines } from './deadlines.js';
import {
  ABORT,
  cancelledBeforeStart,
  JobRun,
  released,
  type JobRunDeps,
  type JobRunStore,
  type RunVerdict,
} from './job-run.js';
import { LeaseRenewal, type RenewalStore } from './lease-renewal.js';
import { LoopState } from './loop-state.js';
import { ClaimWatch } from './claim-watch.js';
import { Prefetch } from './prefetch.js';
import { SupervisorReport } from './supervisor-report.js';

/** The store calls a child's loop makes: settle and claim, write a slow job's start and progress, renew leases. */
export type RunLoopStore = SettleStore & JobRunStore & RenewalStore;

export interface RunLoopDeps extends Omit<JobRunDeps, 'heartbeat' | 'costs' | 'deadlines' | 'store'> {
  store: RunLoopStore;
  ownerId: string;
  /** The child's channel to the supervisor. */
  send: (message: ChildToSupervisor) => void;
  /** Where each slot's running job is recorded for the supervisor, before its handler begins, and where the loop is. */
  recorder: Pick<FlightRecorder, 'started' | 'idle' | 'loop'>;
  /** Whether each success goes to the supervisor in full (ChildStart's successLines). */
  successLines: boolean;
}

interface Running {
  run: JobRun;
  /** Its record's place in the flight recorder. */
  slot: number;
  ended: Promise<void>;
  /** performance.now() when its handler began: the run time the prefetch goes by, finer than the millisecond stamps. */
  began: number;
}

/**
 * A child's work: `concurrency` slots, each running one job. A claim asks for
 * the free slots plus a small prefetch (Prefetch: none at first, growing
 * while jobs are fast, back to none after a slow one), so fast jobs cost one
 * transaction per batch. A prefetched job that cannot start within
 * FLUSH_AFTER_MS is handed back keeping its place, for a free sibling to
 * take. Outcomes go through the group commit (GroupCommit), which carries
 * the next claim when one is due. The heartbeat, cancel, lease loss and stop
 * reach every job held: running, waiting, or with its outcome not yet
 * written. What the supervisor hears of them goes through SupervisorReport.
 */
export class RunLoop {
  /** Claimed and not yet written about. */
  private readonly held = new Map<number, ClaimedJob>();
  private readonly running = new Map<number, Running>();
  /** Claimed, not started, in claim order; `askedAt`: when its claim was asked for; `since`: when it began to wait. */
  private readonly waiting = new Map<number, { job: ClaimedJob; askedAt: number; since: number }>();
  private readonly writer: GroupCommit;
  private readonly claimWatch = new ClaimWatch();
  private readonly leases: LeaseRenewal;
  private readonly idle: IdleWait;
  private readonly state: LoopState;
  /** What each JobRun is given: built once, not for each job. */
  private readonly runDeps: JobRunDeps;
  private readonly report: SupervisorReport;
  private readonly slots: number;
  private readonly rateLimit: RateLimit | undefined;
  private readonly prefetch: Prefetch;
  /** Slots no handler runs in, and those of them whose record still names the job that ran there last. */
  private readonly freeSlots: number[];
  private readonly staleSlots = new Set<number>();
  private claimScheduled = false;
  private claimRun: Promise<void> | undefined;
  private handbackTimer: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(private readonly deps: RunLoopDeps) {
    const { config } = deps;
    this.slots = config.concurrency;
    this.freeSlots = Array.from({ length: this.slots }, (_, slot) => this.slots - 1 - slot);
    this.rateLimit = classRateLimit(config);
    this.prefetch = new Prefetch({
      slots: this.slots,
      claimBatch: config.claim_batch,
      rateLimited: this.rateLimit !== undefined,
    });
    this.idle = new IdleWait(config.poll_seconds * 1000, deps.store.clock);
    this.state = new LoopState(deps.recorder, deps.store.clock);
    this.report = new SupervisorReport(deps.send, deps.successLines);
    this.writer = new GroupCommit({
      store: deps.store,
      log: deps.log,
      retryMs: config.poll_seconds * 1000,
      onWritten: (written) => this.onWritten(written),
    });
    this.leases = new LeaseRenewal({
      store: deps.store,
      leaseMs: config.lease_seconds * 1000,
      intervalMs: config.heartbeat_seconds * 1000,
      log: deps.log,
      held: () => [...this.held.values()].map((job) => ({ id: job.id, leaseToken: job.leaseToken })),
      inTurn: (work) => this.writer.inTurn(work),
      onLost: (jobId) => this.onLeaseLost(jobId),
      onExpired: (jobId) => this.onLeaseLost(jobId, ABORT.leaseExpired()),
      onCancelRequested: (jobId) => this.onCancelRequested(jobId),
      onTick: () => this.sampleMemory(),
    });
    this.runDeps = { ...deps, heartbeat: () => this.leases.beat(), costs: new CostMeter(), deadlines: new Deadlines() };
  }

  start(): void {
    this.leases.start();
    this.pump();
  }

  /** Stop idling and claim now. */
  wake(): void {
    this.idle.wake();
  }

  /** The store's wake-ups (subscribe), armed again by the claims (ClaimWatch): a wake-up ends the watch until then. */
  watchWakes(watch: Pick<WakeWatch, 'rearm'>): void {
    this.claimWatch.use(watch);
  }

  /** Whether each success goes to the supervisor in full from now on. */
  successLines(on: boolean): void {
    this.report.successLines(on);
  }

  /** Tell the supervisor now what is counted and not yet told (starts, successes): before an exit, clean or not. */
  reportNow(): void {
    this.report.now();
  }

  /** Stop claiming, hand back what waits, let the running jobs finish, write everything. */
  async drain(): Promise<void> {
    this.beginStopping();
    await Promise.all([...this.running.values()].map((entry) => entry.ended));
    await this.finish();
  }

  /**
   * Stop now: abort every running job, and write the verdict of any that has
   * not let go within `graceMs` without waiting for its handler.
   */
  async stop(reason: string, graceMs: number): Promise<void> {
    this.beginStopping();
    const runs = [...this.running.values()];
    for (const { run } of runs) run.abort(ABORT.shutdown(reason));
    const letGo = await Promise.race([
      Promise.all(runs.map((entry) => entry.ended)).then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), graceMs)),
    ]);
    if (!letGo) {
      for (const [id, entry] of this.running) {
        const { run } = entry;
        this.endRun(entry);
        const verdict = await run.verdictNow();
        const durationMs = run.runningMs();
        if (verdict === null) this.letGo(id, durationMs);
        else if (this.held.has(id)) this.writer.add({ job: run.job, run: verdict, durationMs });
      }
      this.clearStaleSlots();
    }
    await this.finish();
  }

  /**
   * Killed by the supervisor (SIGTERM): it knows why and takes the running
   * jobs back itself, so write nothing about them; write only the outcomes
   * already reached, and hand back the jobs that never started.
   */
  async abandon(): Promise<void> {
    this.beginStopping();
    for (const [id, entry] of this.running) {
      const { run } = entry;
      this.endRun(entry);
      this.held.delete(id);
      this.leases.untrack(id);
      run.abort(ABORT.shutdown('killed'));
    }
    await this.finish();
  }

  private beginStopping(): void {
    this.stopping = true;
    this.state.enter('stopping');
    this.idle.close();
    this.handBack(Infinity, 'child stopping');
  }

  private async finish(): Promise<void> {
    await this.claimRun;
    this.handBack(Infinity, 'child stopping');
    clearTimeout(this.handbackTimer);
    await this.writer.drain();
    this.writer.close();
    this.leases.stop();
    this.reportNow();
  }

  /** Start what the free slots can take, hand back later what they cannot, and claim when a slot is free and nothing waits. */
  private pump(): void {
    if (this.stopping) return this.clearStaleSlots();
    let late = false;
    for (const [id, { job, askedAt }] of this.waiting) {
      if (this.running.size >= this.slots) break;
      this.waiting.delete(id);
      const onTime = this.rateLimit === undefined || Date.now() - askedAt <= START_MARGIN_MS;
      if (onTime) this.begin(job);
      else this.giveBack(job, `not started within ${START_MARGIN_MS} ms of its claim (rate limit): handed back`);
      late ||= !onTime;
    }
    if (late) void this.writer.flush();
    this.clearStaleSlots();
    this.armHandback();
    if (this.running.size < this.slots && this.waiting.size === 0) this.scheduleClaim();
    else if (this.claimRun === undefined && !this.claimScheduled) this.state.enter('busy');
  }

  /**
   * A claim waits for the end of this turn of the event loop: jobs ending
   * together free their slots for one claim, and timers and messages (pings,
   * heartbeats) run between two claims. Without it a child whose writes do
   * not wait (SQLite, the line closed) ran claim, jobs and outcomes of a deep
   * queue of short jobs as one chain of promise callbacks, its timers a
   * second late and its pings unanswered.
   */
  private scheduleClaim(): void {
    if (this.claimScheduled || this.claimRun !== undefined) return;
    this.claimScheduled = true;
    setImmediate(() => {
      this.claimScheduled = false;
      this.claimNow();
    });
  }

  private claimNow(): void {
    if (this.claimRun !== undefined || this.stopping) return;
    this.state.enter('claim-queued');
    this.claimRun = this.claim().finally(() => (this.claimRun = undefined));
    void this.claimRun.then(() => this.pump());
  }

  private async claim(): Promise<void> {
    const free = this.slots - this.running.size;
    if (free <= 0 || this.waiting.size > 0) return;
    const { config, ownerId } = this.deps;
    const limit = free + this.prefetch.next();
    const request = { classes: [config.name], ownerId, limit, leaseMs: config.lease_seconds * 1000 };
    const { claimed, askedAt } = await this.claimWatch.claim(() =>
      this.writer.flushAndClaim({ ...request, classMaxRetries: config.max_retries, rateLimit: this.rateLimit }, () =>
        this.state.enter('claiming'),
      ),
    );
    const now = Date.now();
    for (const job of claimed) {
      this.held.set(job.id, job);
      this.leases.track(job.id, job.leaseExpiresAt);
      this.waiting.set(job.id, { job, askedAt, since: now });
    }
    this.prefetch.claimed(claimed.length);
    this.state.claimAnswered(claimed.length === 0 ? 'idle' : 'busy');
    if (claimed.length === 0) await this.idle.wait();
  }

  private begin(job: ClaimedJob): void {
    const run = new JobRun(this.runDeps, job);
    const slot = this.freeSlots.pop()!;
    this.staleSlots.delete(slot);
    // Recorded before the handler runs: a handler that blocks the event loop or kills its child at once must not hide its start.
    this.deps.recorder.started(slot, {
      jobId: job.id,
      attempt: job.attempt,
      leaseToken: job.leaseToken,
      startedAt: run.startedAt,
    });
    this.report.started();
    const entry: Running = { run, slot, ended: Promise.resolve(), began: performance.now() };
    this.running.set(job.id, entry);
    entry.ended = run.run().then((verdict) => this.onRunEnd(entry, verdict));
  }

  private onRunEnd(entry: Running, verdict: RunVerdict | null): void {
    const { job } = entry.run;
    // Not ours any more: a stop already wrote its verdict, or the supervisor takes it back.
    if (this.running.get(job.id) !== entry) return;
    this.endRun(entry);
    const durationMs = entry.run.runningMs();
    this.prefetch.jobEnded(performance.now() - entry.began);
    if (verdict === null) this.letGo(job.id, durationMs);
    else if (this.held.has(job.id)) this.writer.add({ job, run: verdict, durationMs });
    this.pump();
  }

  /** Its handler is done with: its slot is free, and its record is emptied unless a job starts there first (pump). */
  private endRun(entry: Running): void {
    this.running.delete(entry.run.job.id);
    this.freeSlots.push(entry.slot);
    this.staleSlots.add(entry.slot);
  }

  private clearStaleSlots(): void {
    for (const slot of this.staleSlots) this.deps.recorder.idle(slot);
    this.staleSlots.clear();
  }

  /** One resident-set reading for every running job's peak: a job that grows and shrinks between its start and end is seen. */
  private sampleMemory(): void {
    if (this.running.size === 0) return;
    const rssBytes = this.runDeps.costs.rssBytes();
    for (const { run } of this.running.values()) run.observeRss(rssBytes);
  }

  /** Hand back (in one write, at once) the waiting jobs that began to wait at or before `waitedSince`. */
  private handBack(waitedSince: number, reason: string): void {
    let handed = 0;
    for (const [id, { job, since }] of this.waiting) {
      if (since > waitedSince) break;
      this.waiting.delete(id);
      this.giveBack(job, reason);
      handed += 1;
    }
    if (handed > 0) void this.writer.flush();
  }

  /** Hand a job back unstarted, keeping its place and spending no retry (written with the next flush). */
  private giveBack(job: ClaimedJob, reason: string): void {
    this.writer.add({ job, run: released(reason), durationMs: 0, unstarted: true });
    this.prefetch.handedBack();
  }

  private armHandback(): void {
    const oldest = this.waiting.values().next().value;
    if (this.handbackTimer !== undefined || oldest === undefined) return;
    this.handbackTimer = setTimeout(
      () => {
        this.handbackTimer = undefined;
        this.handBack(Date.now() - FLUSH_AFTER_MS, 'no free slot: handed back for another worker');
        this.pump();
      },
      Math.max(0, oldest.since + FLUSH_AFTER_MS - Date.now()),
    );
  }

  /** The lease of a held job is gone: stop it if it runs, drop it if it waits, write nothing more about it. */
  private onLeaseLost(jobId: number, reason?: LeaseholdError): void {
    if (!this.held.has(jobId)) return;
    const run = this.running.get(jobId)?.run;
    run?.leaseLost(reason);
    this.waiting.delete(jobId);
    this.letGo(jobId, run === undefined ? 0 : run.runningMs());
  }

  private letGo(jobId: number, durationMs: number): void {
    const job = this.held.get(jobId);
    if (job === undefined) return;
    this.held.delete(jobId);
    this.leases.untrack(jobId);
    this.writer.forget(jobId);
    this.report.leaseLost(jobId, job.attempt, durationMs);
  }

  private onCancelRequested(jobId: number): void {
    const running = this.running.get(jobId);
    if (running !== undefined) return running.run.abort(ABORT.cancelled());
    const waiting = this.waiting.get(jobId);
    if (waiting === undefined) return;
    this.waiting.delete(jobId);
    this.writer.add({ job: waiting.job, run: cancelledBeforeStart(), durationMs: 0 });
    this.pump();
  }

  /** Outcomes written: the jobs leave our hands; the supervisor hears of those it saw start (SupervisorReport). */
  private onWritten(written: { outcome: PendingOutcome; result: SettleResult }[]): void {
    const seen = written.filter(({ outcome, result }) => {
      const { job, run } = outcome;
      if (!this.held.delete(job.id)) return false; // let go of already, and reported then
      this.leases.untrack(job.id);
      if (result.held && result.status === 'QUEUED' && result.runAt !== null && run.verdict.type === 'fail')
        this.idle.wakeAt(result.runAt);
      return !outcome.unstarted; // a prefetch handed back: the supervisor never saw it start
    });
    this.report.written(seen);
  }
}
