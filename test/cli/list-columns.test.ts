/**
 * `leasehold list` on a real SQLite file: a RUNNING job's age is counted
 * from its start, not from its creation, and ATTEMPTS counts runs: a claim
 * handed back without spending a retry is not one.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/open.js';
import { openQueue } from '../../src/queue/queue.js';
import { claimJobs, releaseIfHeld } from '../helpers/fenced-writes.js';
import { tempDir } from '../helpers/temp.js';
import { leasehold, leaseholdJson } from './helpers.js';

const newDir = tempDir('leasehold-list-');
const LEASE_MS = 600_000;

describe('leasehold list', () => {
  it("shows a RUNNING job's time since its start, and counts runs, not handbacks", async () => {
    const database = path.join(newDir(), 'queue.db');
    await migrate({ database });
    const queue = await openQueue({ database, unknownClass: 'ignore' });
    const { id } = await queue.enqueue({ class: 'email', payload: {}, maxRetries: 2 });
    const claim = () => claimJobs(queue.store, { classes: ['email'], ownerId: 'w1', limit: 1, leaseMs: LEASE_MS });
    const [first] = await claim();
    await releaseIfHeld(queue.store, { id, leaseToken: first!.leaseToken, reason: 'shutdown' });
    const [second] = await claim();
    const startedAt = Date.now() - 95_000;
    await queue.store.jobStart({ id, leaseToken: second!.leaseToken, leaseMs: LEASE_MS, startedAt });
    await queue.close();

    const listed = await leasehold(['list', '--db', database]);
    // The CLI reads its clock somewhere between the start and now: on a loaded machine, more than a second later.
    const secondsRunning = Math.floor((Date.now() - startedAt) / 1000);
    expect(listed.exitCode).toBe(0);
    const [header, row] = listed.stdout.split('\n');
    const cells = Object.fromEntries(
      header!.split(/\s{2,}/).map((name, i) => [name.trim().toLowerCase(), row!.split(/\s{2,}/)[i]?.trim()]),
    );
    expect(cells).toMatchObject({ status: 'RUNNING', attempts: '1/3' });
    const [, minutes, seconds] = /^(\d+)m(\d+)s$/.exec(cells.running ?? '') ?? [];
    expect(Number(minutes) * 60 + Number(seconds)).toBeGreaterThanOrEqual(95);
    expect(Number(minutes) * 60 + Number(seconds)).toBeLessThanOrEqual(secondsRunning);

    const json = await leaseholdJson<{ jobs: { attempts: number; runs: number }[] }>(['list', '--db', database]);
    expect(json.jobs[0]).toMatchObject({ attempts: 2, runs: 1 });
  });
});
