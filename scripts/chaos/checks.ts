import type { AttemptRow, JobRow, MaintenanceStore, ProducerStore } from '../../src/store/types.js';
import type { Effect } from './effects.js';

export interface Violations {
  /** Jobs not SUCCEEDED or FAILED once the run drained. */
  lost: number;
  /** Jobs that ended FAILED or CANCELLED: trouble strikes only first attempts and retries are plentiful, so every job must succeed. */
  not_succeeded: number;
  /** Jobs with more than one SUCCEEDED attempt, or whose final token is not their last attempt's. */
  double_commit: number;
  /** Rows that show a write made under a stale token. */
  zombie_writes: number;
  /** integrity_check / foreign_key_check problems, and attempt numbering gaps. */
  database: number;
}

export interface CheckReport {
  violations: Violations;
  examples: string[];
  outcome: { succeeded: number; failed: number; other: number };
  /** The most attempts any job took. */
  attempts_max: number;
  /** Jobs with an attempt that did not succeed (damage, trouble or a fault cut it). */
  interrupted: Set<number>;
}

const EXAMPLES = 10;

/**
 * The guarantees, checked against the data once the run has drained:
 * nothing lost, every job succeeded, nothing committed twice, no stale write
 * landed, the database whole.
 */
export async function checkRun(
  store: MaintenanceStore & ProducerStore,
  jobIds: number[],
  effects: Effect[],
): Promise<CheckReport> {
  const examples: string[] = [];
  const note = (text: string) => {
    if (examples.length < EXAMPLES) examples.push(text);
  };
  const violations = { lost: 0, not_succeeded: 0, double_commit: 0, zombie_writes: 0, database: 0 };
  const outcome = { succeeded: 0, failed: 0, other: 0 };
  const interrupted = new Set<number>();
  let attemptsMax = 0;
  const done = effects.filter((e) => e.kind === 'done');
  const doneByToken = new Map(done.map((e) => [e.lease_token, e]));
  const doneByJob = new Map<number, Effect[]>();
  for (const effect of done) doneByJob.set(effect.job_id, [...(doneByJob.get(effect.job_id) ?? []), effect]);

  for (const id of jobIds) {
    const job = await store.jobGet({ id });
    if (job === undefined) {
      violations.lost += 1;
      note(`job ${id}: gone`);
      continue;
    }
    const attempts = await store.attemptList({ jobId: id });
    attemptsMax = Math.max(attemptsMax, attempts.length);
    if (attempts.some((a) => a.status !== 'SUCCEEDED')) interrupted.add(id);
    if (job.status === 'SUCCEEDED') outcome.succeeded += 1;
    else if (job.status === 'FAILED') outcome.failed += 1;
    else outcome.other += 1;
    if (job.status === 'FAILED' || job.status === 'CANCELLED') {
      violations.not_succeeded += 1;
      note(`job ${id}: ended ${job.status} after ${job.attempts} attempts (${job.error_code}: ${job.error_detail})`);
    } else if (job.status !== 'SUCCEEDED') {
      violations.lost += 1;
      note(`job ${id}: still ${job.status}`);
    }
    const commitProblem = checkCommit(job, attempts, doneByToken);
    if (commitProblem !== undefined) {
      violations.double_commit += 1;
      note(`job ${id}: ${commitProblem}`);
    }
    const staleDone = (doneByJob.get(id) ?? []).filter((e) => e.lease_token !== job.lease_token);
    const zombieProblem = checkStaleWrites(job, attempts, staleDone);
    if (zombieProblem !== undefined) {
      violations.zombie_writes += 1;
      note(`job ${id}: ${zombieProblem}`);
    }
    const numbering = attempts.map((a) => a.attempt).join(',');
    const expected = Array.from({ length: job.attempts }, (_, i) => i + 1).join(',');
    if (numbering !== expected) {
      violations.database += 1;
      note(`job ${id}: attempts numbered ${numbering}, expected ${expected}`);
    }
  }
  const integrity = await store.integrityCheck();
  violations.database += integrity.length;
  for (const problem of integrity) note(`database: ${problem}`);
  return { violations, examples, outcome, attempts_max: attemptsMax, interrupted };
}

/** Exactly-once commit: one SUCCEEDED attempt at most, and the row's token and result are the last attempt's. */
function checkCommit(job: JobRow, attempts: AttemptRow[], doneByToken: Map<string, Effect>): string | undefined {
  const succeeded = attempts.filter((a) => a.status === 'SUCCEEDED');
  if (succeeded.length > 1) return `${succeeded.length} SUCCEEDED attempts`;
  const last = attempts[attempts.length - 1];
  if (last !== undefined && job.lease_token !== last.lease_token)
    return `final token ${job.lease_token} is not the last attempt's ${last.lease_token}`;
  if (job.status === 'SUCCEEDED') {
    const result = JSON.parse(job.result ?? 'null') as { token?: string } | null;
    if (result?.token !== job.lease_token)
      return `result was written under token ${String(result?.token)}, the row holds ${job.lease_token}`;
    if (!doneByToken.has(job.lease_token ?? '')) return 'SUCCEEDED without a handler that finished under its token';
  }
  return undefined;
}

/**
 * A stale holder's write would show as a row that disagrees with the lease
 * that held the job last: an attempt of a stale token marked SUCCEEDED, an
 * attempt left RUNNING on a finished job, or a finished job whose last
 * attempt says otherwise. `staleDone` are the completions handlers reached
 * under tokens that had lost the job.
 */
function checkStaleWrites(job: JobRow, attempts: AttemptRow[], staleDone: Effect[]): string | undefined {
  for (const effect of staleDone) {
    const attempt = attempts.find((a) => a.lease_token === effect.lease_token);
    if (attempt?.status === 'SUCCEEDED')
      return `attempt ${attempt.attempt} SUCCEEDED under stale token ${effect.lease_token}`;
  }
  const last = attempts[attempts.length - 1];
  if (last === undefined) return undefined;
  if ((job.status === 'SUCCEEDED' || job.status === 'FAILED') && last.status !== job.status) {
    return `job ${job.status} but its last attempt says ${last.status}`;
  }
  const running = attempts.find((a) => a.status === 'RUNNING');
  if (running !== undefined && job.status !== 'RUNNING' && job.status !== 'CLAIMED')
    return `attempt ${running.attempt} still RUNNING on a ${job.status} job`;
  return undefined;
}
