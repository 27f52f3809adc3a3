/**
 * What the fault suites check once a fault is over: the supervisor's log (no
 * process crashed or was killed; one DB_UNAVAILABLE and one DB_RECOVERED per
 * outage per process; no line per failed query), /healthz and /metrics, and
 * every job ended, committed at most once, by the holder of its lease.
 */
import { existsSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { JobDetails } from '../../src/queue/queue.js';
import type { JobStatus } from '../../src/store/types.js';
import type { LogRecord, SupervisorHandle } from './supervisor.js';
import { waitFor } from './wait.js';

export type DbFaultKind = 'connection' | 'locked' | 'disk_full' | 'other';

// ---- the log

/** Lines that mean a process died or was put down, or a class stopped: none is expected while a fault lasts. */
export function troubles(sup: SupervisorHandle): string[] {
  return sup
    .logEvents()
    .filter((r) => ['CHILD_EXITED', 'CHILD_KILLED', 'CRASH_LOOP', 'CLASS_DISABLED'].includes(r.event ?? ''))
    .map(
      (r) =>
        `${r.event} pid=${String(r.pid)} exit=${String(r.exit_code ?? r.exit_signal ?? '-')} reason=${String(r.reason ?? '-')}: ${r.msg}`,
    );
}

/** After a stop: every child that ever ran exited 0, none was killed, and no more were spawned than `spawned`. */
export function expectCleanExits(sup: SupervisorHandle, spawned: number): void {
  expect(sup.events('CHILD_SPAWNED').map((r) => r.pid)).toHaveLength(spawned);
  const exits = sup
    .events('CHILD_EXITED')
    .map((r) => ({ pid: r.pid, exit_code: r.exit_code, exit_signal: r.exit_signal ?? null, reason: r.reason }));
  expect(exits).toHaveLength(spawned);
  for (const exit of exits) expect(exit).toMatchObject({ exit_code: 0, exit_signal: null, reason: 'drained' });
  expect(sup.events('CHILD_KILLED')).toEqual([]);
}

/** Who wrote a line: a child's lines carry its pid; the supervisor's own carry none (or its own pid). */
function processOf(sup: SupervisorHandle, record: LogRecord): string {
  return typeof record.pid === 'number' && record.pid !== sup.pid ? `child ${record.pid}` : 'supervisor';
}

/** DB_UNAVAILABLE and DB_RECOVERED lines by process, in log order. */
export function outageLines(sup: SupervisorHandle): Map<string, LogRecord[]> {
  const byProcess = new Map<string, LogRecord[]>();
  for (const record of sup.logEvents()) {
    if (record.event !== 'DB_UNAVAILABLE' && record.event !== 'DB_RECOVERED') continue;
    const key = processOf(sup, record);
    byProcess.set(key, [...(byProcess.get(key) ?? []), record]);
  }
  return byProcess;
}

/**
 * Waits until every process that logged DB_UNAVAILABLE has logged DB_RECOVERED after it, then checks
 * each one's lines: DB_UNAVAILABLE of `kind`, then DB_RECOVERED of `kind` with `outage_ms`, and
 * again for each further outage it noticed, `maxOutages` at most (default: exactly one).
 * Returns the lines by process; `required` (the default): some process must have noticed.
 */
export async function expectOutagesLogged(
  sup: SupervisorHandle,
  {
    kind,
    maxOutages = 1,
    required = true,
    timeoutMs = 15_000,
  }: { kind: DbFaultKind; maxOutages?: number; required?: boolean; timeoutMs?: number },
): Promise<Map<string, LogRecord[]>> {
  const settled = () => {
    const lines = outageLines(sup);
    return (lines.size > 0 || !required) &&
      [...lines.values()].every((own) => own[own.length - 1]?.event === 'DB_RECOVERED')
      ? lines
      : undefined;
  };
  const lines = await waitFor('a DB_UNAVAILABLE line, and a DB_RECOVERED after the last one of each process', settled, {
    timeoutMs,
    intervalMs: 100,
  }).catch((error: unknown) => {
    const seen = [...outageLines(sup)].map(
      ([who, own]) => `${who}: ${own.map((r) => `${r.event}(${String(r.kind)})`).join(' ')}`,
    );
    throw new Error(`${(error as Error).message}; seen: ${seen.join('; ') || 'no such line'}`);
  });
  for (const [who, own] of lines) {
    const shape = own.map((r) => [r.event, r.kind]);
    const outages = own.length / 2;
    expect(Number.isInteger(outages) && outages >= 1 && outages <= maxOutages, `${who}: ${JSON.stringify(shape)}`).toBe(
      true,
    );
    expect(shape, who).toEqual(
      Array.from({ length: own.length }, (_, i) => [i % 2 === 0 ? 'DB_UNAVAILABLE' : 'DB_RECOVERED', kind]),
    );
    for (const recovered of own.filter((r) => r.event === 'DB_RECOVERED')) {
      expect(
        typeof recovered.outage_ms === 'number' && recovered.outage_ms >= 0,
        `${who}: outage_ms ${String(recovered.outage_ms)}`,
      ).toBe(true);
    }
  }
  return lines;
}

/** Lines about single failed queries (before issue 15: ~25 of each per outage, and a failed sweep every interval): at most `max`. */
export function expectNoLinePerFailedQuery(sup: SupervisorHandle, max = 2): void {
  const noisy = sup.logEvents().filter((r) => /heartbeat failed|health check failed|sweep failed/i.test(r.msg));
  expect(
    noisy.length,
    `per-query failure lines: ${noisy
      .slice(0, 3)
      .map((r) => r.msg)
      .join(' | ')}`,
  ).toBeLessThanOrEqual(max);
}

// ---- HTTP

/** The base URL of the supervisor's /metrics and /healthz (`http: { port: 0 }`: the port it logged). */
export async function httpBase(sup: SupervisorHandle): Promise<string> {
  const listening = await sup.waitForEvent('HTTP_LISTENING');
  return `http://127.0.0.1:${String(listening.port)}`;
}

/** GET /healthz: the status and the parsed body; undefined when nothing answered in time. */
export async function health(base: string): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
  try {
    const response = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(3_000) });
    return { status: response.status, body: JSON.parse(await response.text()) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

/** `leasehold_db_errors_total` by its `kind` label, from one scrape of /metrics. */
export async function dbErrorsByKind(base: string): Promise<Record<string, number>> {
  const response = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5_000) });
  const text = await response.text();
  expect(response.status, text.slice(0, 200)).toBe(200);
  const counts: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^leasehold_db_errors_total\{(.*)\} (\S+)$/.exec(line);
    if (match === null) continue;
    const kind = /(?:^|,)kind="([^"]*)"/.exec(match[1]!)?.[1] ?? '';
    counts[kind] = (counts[kind] ?? 0) + Number(match[2]);
  }
  return counts;
}

// ---- the jobs

const UNFINISHED: JobStatus[] = ['QUEUED', 'CLAIMED', 'RUNNING'];

/** Wait until none of `ids` is queued or running (failing at once if the supervisor exits), and read each one back. */
export async function waitAllEnded(sup: SupervisorHandle, ids: number[], timeoutMs: number): Promise<JobDetails[]> {
  expect(ids.length).toBeGreaterThan(0);
  const wanted = new Set(ids);
  let left: number[] = [];
  await waitFor(
    `all ${ids.length} jobs to end`,
    async () => {
      if (sup.exited()) throw new Error(`the supervisor exited while its jobs ran:\n${sup.output().slice(-3000)}`);
      left = [];
      for (const status of UNFINISHED) {
        for (const job of await sup.queue.store.jobList({ status, limit: 100_000 }))
          if (wanted.has(job.id)) left.push(job.id);
      }
      return left.length === 0;
    },
    { timeoutMs, intervalMs: 250 },
  ).catch((error: unknown) => {
    throw new Error(
      `${(error as Error).message}; still unfinished: ${left.slice(0, 20).join(', ')}\n${troubles(sup).slice(0, 10).join('\n')}`,
    );
  });
  const details: JobDetails[] = [];
  for (const id of ids) details.push((await sup.queue.get(id))!);
  return details;
}

/**
 * Nothing committed twice: at most one SUCCEEDED attempt and one SUCCEEDED event per job. A job that
 * SUCCEEDED did so in its last attempt, under the token on its row, with the result of a handler that
 * ran under that token (the fixtures return it), and no outcome written under that token was turned
 * away as a zombie's (a commit in doubt, retried, is ours).
 */
export function expectCommittedOnce(details: JobDetails[]): void {
  expect(details.length).toBeGreaterThan(0);
  for (const { job, attempts, events } of details) {
    const label = `job ${job.id}: ${JSON.stringify(attempts.map((a) => [a.attempt, a.status, a.error_code]))}`;
    expect(attempts.filter((a) => a.status === 'SUCCEEDED').length, label).toBeLessThanOrEqual(1);
    expect(events.filter((e) => e.event === 'SUCCEEDED').length, label).toBeLessThanOrEqual(1);
    if (job.status !== 'SUCCEEDED') continue;
    const last = attempts[attempts.length - 1]!;
    expect(last.status, label).toBe('SUCCEEDED');
    expect(job.lease_token, label).toBe(last.lease_token);
    expect((job.result as { token?: string } | null)?.token, label).toBe(job.lease_token);
    // Only outcome writes: a heartbeat that was in flight while the outcome committed is turned away after it, fault or not.
    const zombie = events.filter((e) => {
      if (e.event !== 'ZOMBIE_WRITE_REJECTED') return false;
      const detail = JSON.parse(e.detail ?? '{}') as { lease_token?: string; op?: string };
      return detail.lease_token === job.lease_token && detail.op !== 'heartbeat';
    });
    expect(zombie, label).toEqual([]);
  }
}

/** Every job SUCCEEDED, each committed once. */
export function expectAllSucceededOnce(details: JobDetails[]): void {
  const notSucceeded = details
    .filter((d) => d.job.status !== 'SUCCEEDED')
    .map((d) => `${d.job.id}:${d.job.status}:${String(d.job.error_code)}`);
  expect(notSucceeded).toEqual([]);
  expectCommittedOnce(details);
}

// ---- leases that ran out in the dark (the lease-watch fixture's records)

/** A line of the lease-watch fixture: a handler's start, the abort of its signal (the reason's code), or its end. */
export interface HandlerRecord {
  kind: 'start' | 'aborted' | 'done';
  id: number;
  attempt: number;
  token: string;
  pid: number;
  ts: number;
  code?: string | null;
}

export function readHandlerRecords(file: string): HandlerRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as HandlerRecord);
}

/**
 * The attempts that held a lease (job id -> token) when the fault began at `faultAt`: no renewal could
 * land after that, so each lease ran out by faultAt + leaseMs, and nothing may be committed under it
 * later (the holder stops believing it holds the lease, and writes nothing).
 */
export function expectNothingCommittedAfterLease(
  details: JobDetails[],
  held: Map<number, string>,
  faultAt: number,
  leaseMs: number,
): void {
  expect(held.size).toBeGreaterThan(0);
  for (const [id, token] of held) {
    const { attempts } = details.find((d) => d.job.id === id)!;
    const attempt = attempts.find((a) => a.lease_token === token);
    const label = `job ${id}: ${JSON.stringify(attempts.map((a) => [a.attempt, a.status, a.error_code, a.started_at, a.finished_at]))}`;
    expect(attempt, label).toBeDefined();
    if (attempt!.status === 'SUCCEEDED')
      expect(attempt!.finished_at!, `${label}: committed after the lease ran out`).toBeLessThanOrEqual(
        faultAt + leaseMs,
      );
  }
}

/**
 * The handler that ran under `token` past its lease's end saw its signal aborted with LEASE:LOST and did not
 * finish, and that abort came before the job was claimed again (the next attempt's start is its claim).
 * Returns when each happened.
 */
export function expectAbortedBeforeNextClaim(
  detail: JobDetails,
  token: string,
  records: HandlerRecord[],
): { abortedAt: number; claimedAgainAt: number } {
  const mine = records.filter((r) => r.token === token);
  const seen = {
    started: mine.filter((r) => r.kind === 'start').length,
    aborted: mine.filter((r) => r.kind === 'aborted').map((r) => r.code),
    done: mine.filter((r) => r.kind === 'done').length,
  };
  expect(seen, `job ${detail.job.id}, what its handler saw: ${JSON.stringify(mine)}`).toEqual({
    started: 1,
    aborted: ['LEASE:LOST'],
    done: 0,
  });
  const lost = detail.attempts.find((a) => a.lease_token === token)!;
  const next = detail.attempts.find((a) => a.attempt === lost.attempt + 1);
  expect(next, `job ${detail.job.id} was claimed again: ${JSON.stringify(detail.attempts)}`).toBeDefined();
  const abortedAt = mine.find((r) => r.kind === 'aborted')!.ts;
  expect(abortedAt, `job ${detail.job.id}: the abort came before the next claim`).toBeLessThan(next!.started_at);
  return { abortedAt, claimedAgainAt: next!.started_at };
}
