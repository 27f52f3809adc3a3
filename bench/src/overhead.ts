/** Section 8: the supervisor's cost: idle RSS, and how soon a SIGKILLed child is replaced. */
import { MB, rssBytes, sleep, summarize, waitFor, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { describeClass, withSupervisor, writeNoopHandler, type SupervisedRun } from './leasehold.js';

const CHILDREN = 4;
const SETTLE_MS = 2_000;

export interface OverheadSection {
  config: string;
  /** `bare_node`: an idle `node -e` with nothing loaded, for scale. */
  rss_mb: { supervisor: Stat; child: Stat; per_child_median: number[]; bare_node: Stat };
  child_replacement_ms: {
    /** CHILD_READY log ts of the replacement minus the kill time. */
    by_log: Stat;
    /** The first poll (every 10 ms) that saw the replacement's worker row 'ready'. */
    by_registry: Stat;
    /** What the restart policy waited before spawning (CHILD_RESTART_SCHEDULED delay_ms). */
    restart_delay: Stat;
  };
}

/** The slot of a child from its worker id (`<supervisor>/<class>.<slot>.<generation>`). */
function slotOf(workerId: string): string {
  return workerId.split('/').pop()?.split('.').slice(-2, -1)[0] ?? workerId;
}

/** RSS of an idle node process that loaded nothing: the floor every supervisor and child stands on. */
async function bareNodeRss(ctx: BenchContext, samples: number): Promise<Stat> {
  const bare = ctx.processes.startNode('bare-node', '-e', ['setInterval(() => {}, 1000)']);
  try {
    await sleep(SETTLE_MS / 2);
    const values: number[] = [];
    for (let i = 0; i < samples; i++) {
      values.push((rssBytes(bare.pid) ?? Number.NaN) / MB);
      await sleep(200);
    }
    return summarize(values, 1);
  } finally {
    await bare.stop(2_000);
  }
}

export async function runOverhead(ctx: BenchContext): Promise<OverheadSection> {
  return withSupervisor(ctx, 'overhead', { handler: writeNoopHandler, processes: CHILDREN }, (run) =>
    measure(ctx, run),
  );
}

async function measure(ctx: BenchContext, { config, queue, supervisor }: SupervisedRun): Promise<OverheadSection> {
  const { sizes } = ctx;
  const { store } = queue;
  const children = await supervisor.waitReady(store, CHILDREN);
  await sleep(SETTLE_MS);
  ctx.progress(`RSS of an idle supervisor and ${CHILDREN} idle children`);
  const supervisorRss: number[] = [];
  const childRss = new Map<number, number[]>();
  for (let sample = 0; sample < Math.max(3, sizes.runs); sample++) {
    supervisorRss.push((rssBytes(supervisor.pid) ?? Number.NaN) / MB);
    for (const child of children)
      childRss.set(child.pid, [...(childRss.get(child.pid) ?? []), (rssBytes(child.pid) ?? Number.NaN) / MB]);
    await sleep(500);
  }
  const perChild = [...childRss.values()].map((values) => summarize(values, 1).median);
  const bareNode = await bareNodeRss(ctx, Math.max(3, sizes.runs));

  const byLog: number[] = [];
  const byRegistry: number[] = [];
  const delays: number[] = [];
  const killedSlots = new Set<string>();
  for (let kill = 0; kill < sizes.crashKills; kill++) {
    ctx.progress(`child crash ${kill + 1}/${sizes.crashKills}: SIGKILL an idle child, wait for its replacement`);
    const live = await supervisor.waitReady(store, CHILDREN);
    const victim = live.find((c) => !killedSlots.has(slotOf(c.id))) ?? live[0];
    if (victim === undefined) throw new Error('no child to kill');
    killedSlots.add(slotOf(victim.id));
    const before = new Set(live.map((c) => c.id));
    const killedAt = Date.now();
    process.kill(victim.pid, 'SIGKILL');
    const replacement = await waitFor(
      'the replacement child ready',
      async () => (await supervisor.children(store)).find((c) => !before.has(c.id) && c.state === 'ready'),
      { intervalMs: 10, timeoutMs: 60_000 },
    );
    byRegistry.push(Date.now() - killedAt);
    const ready = await waitFor(
      'its CHILD_READY line',
      () => supervisor.log('CHILD_READY').find((line) => line.pid === replacement.pid),
      { timeoutMs: 10_000 },
    );
    byLog.push(Date.parse(ready.ts) - killedAt);
    const delay = supervisor.log('CHILD_RESTART_SCHEDULED').find((line) => line.pid === victim.pid)?.delay_ms;
    if (typeof delay === 'number') delays.push(delay);
  }
  return {
    config: `default config but processes (${describeClass(config)}), no-op handler; ${Math.max(3, sizes.runs)} RSS samples 0.5 s apart`,
    rss_mb: {
      supervisor: summarize(supervisorRss, 1),
      child: summarize([...childRss.values()].flat(), 1),
      per_child_median: perChild,
      bare_node: bareNode,
    },
    child_replacement_ms: {
      by_log: summarize(byLog),
      by_registry: summarize(byRegistry),
      restart_delay: delays.length > 0 ? summarize(delays) : summarize([Number.NaN]),
    },
  };
}
