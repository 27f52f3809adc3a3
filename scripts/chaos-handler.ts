/**
 * The chaos classes' handler: waits (abortably) for a while, in-process or
 * in a subprocess, and records what it did in a separate effects log
 * (its pid, its subprocesses' pids, each fenced write and what the store
 * answered), so that the chaos program can check the queue against the
 * handlers' own account. Some jobs misbehave on their first attempt.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HandlerContext, HandlerJob } from '../src/handler.js';
import { LeaseholdError, LeaseLostError } from '../src/errors.js';
import { EffectsRecorder, type WriteOutcome } from './chaos/effects.js';
import { readStat } from './proc.js';

export interface ChaosPayload {
  /** How long the work takes, in ms. */
  ms: number;
  /** What goes wrong on the first attempt. */
  trouble: 'none' | 'throw' | 'hang' | 'busy';
  /** The effects folder: each process records in a file of its own there. */
  effects: string;
  /** Wait in a subprocess (`sleep`), as a handler that shells out does: it must not outlive the child. */
  subprocess?: boolean;
  /**
   * After the wait, whatever the signal says, write progress (a fenced
   * write) and record what the store answered. A zombie does not know it is
   * one: the fence, not its good manners, must stop it.
   */
  write?: boolean;
}

/**
 * One recorder per effects folder: a child may run jobs of several chaos
 * runs (an earlier run's jobs left in a reused PostgreSQL schema), and each
 * job's effects belong in its own run's folder.
 */
const recorders = new Map<string, EffectsRecorder>();
const ownStart = readStat(process.pid)?.startTicks ?? null;

export default async function chaosHandler(job: HandlerJob, ctx: HandlerContext): Promise<unknown> {
  const payload = job.payload as ChaosPayload;
  let recorder = recorders.get(payload.effects);
  if (recorder === undefined) recorders.set(payload.effects, (recorder = new EffectsRecorder(payload.effects)));
  const about = { job_id: job.id, attempt: job.attempt, lease_token: ctx.leaseToken };
  recorder.record({ ...about, kind: 'start', pid: process.pid, proc_start: ownStart });
  if (job.attempt === 1) await misbehave(payload.trouble);

  let stopped: unknown;
  try {
    if (payload.subprocess === true) {
      await waitInSubprocess(payload.ms, ctx.signal, (pid) =>
        recorder.record({ ...about, kind: 'spawn', pid, proc_start: readStat(pid)?.startTicks ?? null }),
      );
    } else {
      await sleep(payload.ms, undefined, { signal: ctx.signal });
    }
  } catch (error) {
    stopped = error;
  }
  if (payload.write === true) {
    const sentAt = Date.now();
    const outcome = await fencedWrite(ctx);
    recorder.record({ ...about, kind: 'write', pid: process.pid, outcome, sent_at: sentAt });
    if (outcome === 'refused' || outcome === 'lost_locally')
      throw new LeaseholdError('LEASE:LOST', `chaos: progress ${outcome}`, { retryable: false });
  }
  if (stopped !== undefined) throw stopped;
  recorder.record({ ...about, kind: 'done', pid: process.pid });
  return { token: ctx.leaseToken, attempt: job.attempt, pid: process.pid };
}

async function misbehave(trouble: ChaosPayload['trouble']): Promise<void> {
  switch (trouble) {
    case 'throw':
      throw Object.assign(new Error('chaos: thrown on the first attempt'), { code: 'CHAOS:THROWN' });
    case 'hang':
      // ignores its signal: past max runtime the supervisor must kill the child
      return new Promise(() => undefined);
    case 'busy': {
      // blocks the event loop: no heartbeats, the supervisor must notice
      const until = Date.now() + 600_000;
      while (Date.now() < until);
      return;
    }
    case 'none':
      return;
  }
}

/** One progress write, and what came of it. A failure other than the fence is recorded and not thrown: progress is best effort here. */
async function fencedWrite(ctx: HandlerContext): Promise<WriteOutcome> {
  try {
    await ctx.progress({ at: Date.now() });
    return 'accepted';
  } catch (error) {
    if (error instanceof LeaseLostError) return 'refused';
    if (error instanceof LeaseholdError && error.code === 'LEASE:LOST') return 'lost_locally';
    const code = (error as { code?: unknown }).code;
    return `failed:${typeof code === 'string' ? code : (error as Error).name}`;
  }
}

/** `sleep` in a subprocess of this child (in its process group), ended on abort. */
async function waitInSubprocess(ms: number, signal: AbortSignal, onSpawn: (pid: number) => void): Promise<void> {
  signal.throwIfAborted();
  const sub = spawn('sleep', [(ms / 1000).toFixed(3)], { stdio: 'ignore' });
  await once(sub, 'spawn');
  onSpawn(sub.pid!);
  const stop = () => sub.kill('SIGTERM');
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop();
  try {
    if (sub.exitCode === null && sub.signalCode === null) await once(sub, 'exit');
  } finally {
    signal.removeEventListener('abort', stop);
  }
  signal.throwIfAborted();
}
