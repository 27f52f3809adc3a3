/** Section 6: from SIGKILL of a child mid-job to its job claimed again; 2 children, so that another one can take it. */
import type { Queue } from '../../dist/src/queue/queue.js';
import { quantilesOverRuns, sleep, waitFor, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import {
  BENCH_CLASS,
  describeClass,
  withSupervisor,
  writeSleepFirstAttemptHandler,
  type SupervisorRun,
} from './leasehold.js';

const CHILDREN = 2;

export interface RecoverySection {
  config: string;
  kills_per_run: number;
  unit: 'ms';
  /** claimed_at of the next attempt minus the kill time: the figure the target is about. */
  reclaim_ms: { p50: Stat; max: Stat };
  /** The killed attempt's finished_at (the supervisor took the job back) minus the kill time. */
  taken_back_ms: { p50: Stat; max: Stat };
  /** The retry's run_at minus when it was taken back: the backoff the class's policy gave it (default config). */
  backoff_ms: { p50: Stat; max: Stat };
}

interface KillSample {
  reclaim: number;
  takenBack: number;
  backoff: number;
}

async function killOnce(queue: Queue, supervisor: SupervisorRun, n: number): Promise<KillSample> {
  const { store } = queue;
  // A child killed during its first job restarts after a growing delay (restart policy): wait for both.
  await supervisor.waitReady(store, CHILDREN, 90_000);
  const { id } = await queue.enqueue({ class: BENCH_CLASS, payload: { n } });
  const running = await waitFor(
    `job ${id} RUNNING`,
    async () => {
      const job = await store.jobGet({ id });
      return job?.status === 'RUNNING' && job.owner_id !== null ? job : undefined;
    },
    { intervalMs: 5, timeoutMs: 30_000 },
  );
  const owner = (await supervisor.children(store)).find((c) => c.id === running.owner_id);
  if (owner === undefined) throw new Error(`job ${id}: its owner ${String(running.owner_id)} is not a live child`);
  const killedAt = Date.now();
  process.kill(owner.pid, 'SIGKILL');
  const again = await waitFor(
    `job ${id} claimed again`,
    async () => {
      const job = await store.jobGet({ id });
      return job !== undefined && job.attempts > running.attempts && job.claimed_at !== null ? job : undefined;
    },
    { intervalMs: 5, timeoutMs: 60_000 },
  );
  const killed = (await store.attemptList({ jobId: id })).find((a) => a.attempt === running.attempts);
  if (killed?.finished_at == null || again.claimed_at === null)
    throw new Error(`job ${id}: the killed attempt was not closed`);
  await waitFor(
    `job ${id} SUCCEEDED`,
    async () => ((await store.jobGet({ id }))?.status === 'SUCCEEDED' ? true : undefined),
    { timeoutMs: 30_000 },
  );
  return {
    reclaim: again.claimed_at - killedAt,
    takenBack: killed.finished_at - killedAt,
    backoff: again.run_at - killed.finished_at,
  };
}

export async function runRecovery(ctx: BenchContext): Promise<RecoverySection> {
  const { sizes } = ctx;
  const perRun: KillSample[][] = [];
  let described = '';
  for (let run = 0; run < sizes.runs; run++) {
    const setup = {
      handler: (dir: string) => writeSleepFirstAttemptHandler(dir, sizes.recoverySleepMs),
      processes: CHILDREN,
      extra: ['    restart: { max_restarts: 1000, within_seconds: 60 }'],
    };
    await withSupervisor(ctx, 'recovery', setup, async ({ config, queue, supervisor }) => {
      described = describeClass(config);
      const samples: KillSample[] = [];
      for (let kill = 0; kill < sizes.recoveryKills; kill++) {
        ctx.progress(`recovery run ${run + 1}/${sizes.runs}: kill ${kill + 1}/${sizes.recoveryKills}`);
        samples.push(await killOnce(queue, supervisor, kill));
        await sleep(50);
      }
      perRun.push(samples);
    });
  }
  const figure = (pick: (s: KillSample) => number) =>
    quantilesOverRuns(
      perRun.map((samples) => samples.map(pick)),
      ['p50', 'max'],
    );
  return {
    config: `default config but processes, handler (sleeps ${sizes.recoverySleepMs} ms on attempt 1) and restart.max_restarts 1000 (${described})`,
    kills_per_run: sizes.recoveryKills,
    unit: 'ms',
    reclaim_ms: figure((s) => s.reclaim),
    taken_back_ms: figure((s) => s.takenBack),
    backoff_ms: figure((s) => s.backoff),
  };
}
