import type { Clock } from '../src/clock.js';
import type { FlightRecorder, LoopPhase } from '../src/ipc/flight-record.js';

/**
 * Where the run loop is, kept in the flight recorder for the supervisor: a
 * loop that stays in a waiting phase past its bounds, while its class has
 * due jobs, is stalled (CHILD_STALLED). Written only when the phase
 * changes, so a busy loop pays one small write per claim, not per job.
 */
export class LoopState {
  private phase: LoopPhase | undefined;
  private lastClaimAt: number | null = null;

  constructor(
    private readonly recorder: Pick<FlightRecorder, 'loop'>,
    /** The store's clock, which the supervisor judges the record by: a step of the wall clock moves neither. */
    private readonly clock: Clock,
  ) {}

  /** Stopping is the last phase: a claim answered after it does not take the loop back. */
  enter(phase: LoopPhase): void {
    if (phase === this.phase || this.phase === 'stopping') return;
    this.phase = phase;
    this.recorder.loop({ phase, since: this.clock.now(), lastClaimAt: this.lastClaimAt });
  }

  /** The database answered a claim (with jobs or none): the loop moves on to `next`. */
  claimAnswered(next: LoopPhase): void {
    this.lastClaimAt = this.clock.now();
    if (this.phase === 'stopping') return;
    this.phase = undefined;
    this.enter(next);
  }
}
