import { describe, expect, it } from 'vitest';
import { planRecovery, planSettlement, type HeldFacts } from '../../src/store/outcomes.js';
import { COST_TOP_KEPT, ROLLUP_BUCKET_MS, ROLLUP_KEPT_MS, rollupOf, windowBounds } from '../../src/store/rollup.js';
import type { Settlement } from '../../src/store/types.js';

const NOW = Date.UTC(2026, 0, 1) + 12_345;
const BUCKET = NOW - 2_345;
const MIB = 1024 * 1024;

const facts = (id: number, over: Partial<HeldFacts> = {}): HeldFacts => ({
  id,
  class: 'email',
  status: 'RUNNING',
  attempts: 1,
  releases: 0,
  max_retries: 0,
  cancel_requested_at: null,
  owner_id: 'w',
  lease_token: `t${id}`,
  claimed_at: NOW - 100,
  lease_expires_at: NOW + 30_000,
  ...over,
});
const verdict = (id: number, v: Settlement['verdict'], cpuMs?: number): Settlement => ({
  id,
  leaseToken: `t${id}`,
  startedAt: null,
  verdict: v,
  cost: cpuMs === undefined ? undefined : { cpuMs, peakRssBytes: (100 - cpuMs) * MIB },
});
const outcome = (row: HeldFacts, v: Settlement['verdict'], cpuMs?: number) => ({ plan: planSettlement(verdict(row.id, v, cpuMs), row, NOW), facts: row });
const failure = (code: string, retryable: boolean): Settlement['verdict'] => ({ type: 'fail', error: { code, detail: 'x', retryable }, retryDelayMs: 0 });

describe('rollupOf: what a batch of outcomes adds to the rollup', () => {
  it('counts terminal jobs by class, status and runs, and every ended attempt by class and code with its cost', () => {
    const rows = rollupOf(
      [
        outcome(facts(1), { type: 'complete', result: null }, 2),
        outcome(facts(2, { attempts: 3, releases: 1 }), { type: 'complete', result: null }, 4),
        outcome(facts(3, { max_retries: 2 }), failure('E:A', true), 8),
        outcome(facts(4, { class: 'sms' }), failure('E:A', false)),
        outcome(facts(5), { type: 'release', reason: 'stop' }, 1),
        { plan: planRecovery(facts(6), { errorCode: 'LEASE:EXPIRED', errorDetail: 'x', event: 'RECOVERED', actor: 's', retryDelay: () => 0 }, NOW), facts: facts(6) },
      ],
      NOW,
    );
    expect(rows.jobs).toEqual([
      { bucket: BUCKET, class: 'email', status: 'SUCCEEDED', runs: 1, jobs: 1 },
      { bucket: BUCKET, class: 'email', status: 'SUCCEEDED', runs: 2, jobs: 1 },
      { bucket: BUCKET, class: 'sms', status: 'FAILED', runs: 1, jobs: 1 },
      { bucket: BUCKET, class: 'email', status: 'FAILED', runs: 1, jobs: 1 },
    ]);
    const attempt = (cls: string, code: string, ended: number, measured: number, cpu: number, rss: number) => ({
      bucket: BUCKET, class: cls, code, ended, measured, cpu_ms: cpu, max_peak_rss_bytes: rss, last_at: NOW,
    });
    expect(rows.attempts).toEqual([
      attempt('email', '', 2, 2, 6, 98 * MIB),
      attempt('email', 'E:A', 1, 1, 8, 92 * MIB),
      attempt('sms', 'E:A', 1, 0, 0, 0),
      attempt('email', 'LEASE:RELEASED', 1, 1, 1, 99 * MIB),
      attempt('email', 'LEASE:EXPIRED', 1, 0, 0, 0),
    ]);
    expect(rows.top.map((row) => [row.job_id, row.cpu_ms]).sort()).toEqual([[1, 2], [2, 4], [3, 8], [5, 1]]);
  });

  it("keeps as candidates only the batch's own costliest attempts, by CPU and by peak RSS", () => {
    const many = Array.from({ length: 3 * COST_TOP_KEPT }, (_, i) => outcome(facts(i + 1), { type: 'complete', result: null }, i));
    const top = rollupOf(many, NOW).top.map((row) => row.job_id).sort((a, b) => a - b);
    const byRss = Array.from({ length: COST_TOP_KEPT }, (_, i) => i + 1);
    const byCpu = Array.from({ length: COST_TOP_KEPT }, (_, i) => 3 * COST_TOP_KEPT - i).reverse();
    expect(top).toEqual([...byRss, ...byCpu]);
  });
});

describe('windowBounds: which part of a window the rollup answers', () => {
  it('whole buckets inside the window from the rollup, the edges raw; an open window has no upper edge', () => {
    expect(windowBounds({ since: NOW - 60_000, until: NOW }, NOW)).toEqual({ since: NOW - 60_000, from: BUCKET - 50_000, to: BUCKET, until: NOW });
    const open = windowBounds({ since: BUCKET - 50_000 }, NOW);
    expect(open).toMatchObject({ since: BUCKET - 50_000, from: BUCKET - 50_000 });
    expect(open.to).toBe(open.until);
  });

  it('older than the rollup keeps, or unasked for, the window is read raw', () => {
    const since = NOW - 2 * ROLLUP_KEPT_MS;
    expect(windowBounds({ since }, NOW).from).toBe(Math.ceil((NOW - ROLLUP_KEPT_MS) / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS);
    const raw = windowBounds({ since, until: NOW }, NOW, false);
    expect([raw.from, raw.to]).toEqual([since, since]);
  });

  it('a window within one bucket is all edge', () => {
    const inside = windowBounds({ since: BUCKET + 1_000, until: BUCKET + 2_000 }, NOW);
    expect(inside.from).toBe(BUCKET + 2_000);
    expect(inside.to).toBe(BUCKET + 2_000);
  });
});
