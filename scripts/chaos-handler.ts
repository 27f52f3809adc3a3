/**
 * The chaos class's handler: does real (abortable) waiting for a while and
 * records its side effects (job, attempt, lease token, pid) in a separate
 * effects database, so the chaos program can compare what handlers did with
 * what the queue committed. Some jobs misbehave on their first attempt.
 */
import Database from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HandlerContext, HandlerJob } from '../child/handler.js';

export interface ChaosPayload {
  /** How long the work takes, in ms. */
  ms: number;
  /** What goes wrong on the first attempt. */
  trouble: 'none' | 'throw' | 'hang' | 'busy';
  /** Path of the effects database. */
  effects: string;
}

/**
 * One connection per effects database: a child may run jobs of several chaos
 * runs (an earlier run's jobs left in a reused PostgreSQL schema), and each
 * job's effects belong in its own run's file.
 */
const effectsByPath = new Map<string, Database.Database>();

function record(path: string, job: HandlerJob, ctx: HandlerContext, kind: 'start' | 'done'): void {
  let effects = effectsByPath.get(path);
  if (effects === undefined) {
    effects = new Database(path, { timeout: 10_000 });
    effects.pragma('journal_mode = WAL');
    effectsByPath.set(path, effects);
  }
  effects
    .prepare('INSERT INTO effects (job_id, attempt, lease_token, pid, kind, ts) VALUES (?, ?, ?, ?, ?, ?)')
    .run(job.id, job.attempt, ctx.leaseToken, process.pid, kind, Date.now());
}

export default async function chaosHandler(job: HandlerJob, ctx: HandlerContext): Promise<unknown> {
  const payload = job.payload as ChaosPayload;
  record(payload.effects, job, ctx, 'start');
  if (job.attempt === 1) {
    switch (payload.trouble) {
      case 'throw':
        throw Object.assign(new Error('chaos: thrown on the first attempt'), { code: 'CHAOS:THROWN' });
      case 'hang':
        // ignores its signal: past max runtime the supervisor must kill the child
        await new Promise(() => undefined);
        break;
      case 'busy': {
        // blocks the event loop: no heartbeats, the supervisor must notice
        const until = Date.now() + 600_000;
        while (Date.now() < until);
        break;
      }
      case 'none':
        break;
    }
  }
  await sleep(payload.ms, undefined, { signal: ctx.signal });
  record(payload.effects, job, ctx, 'done');
  return { token: ctx.leaseToken, attempt: job.attempt, pid: process.pid };
}
