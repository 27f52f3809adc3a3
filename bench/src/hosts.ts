/**
 * Section 24: several hosts on one PostgreSQL queue (issue 53). K
 * supervisors, each a host of its own (LEASEHOLD_HOST) with one child,
 * drain section 9's no-op jobs together, K = 1, 2 and 4, in rounds: jobs/s
 * must rise from 1 host to 2, and the server's CPU per job must not grow by
 * more than a tenth from 1 host to 4. Per job is measured once every host
 * runs (from a tenth of the jobs done, as section 9's `database server`):
 * each host's start-up (its connections, their first plans, its
 * registration) is a cost per host, shown beside it over the whole run with
 * the enqueue. On a 2-core machine the hosts share the cores: what it shows
 * is what each added client costs the server, not a cluster's reach. Then,
 * in as many rounds, 1 and 4 hosts idle on an empty queue (idle-hosts.ts):
 * the floor each host puts under the server. In the same rounds, section
 * 25's bare loop (the spec's rows, timeline included, one statement a batch)
 * in 1 and 4 processes of its own: how much of the growth the machine's
 * sharing costs any client, before leasehold adds anything.
 */
import { summarize, type Stat } from './common.js';
import { columnsTable, figures, stat } from './table.js';
import type { BenchContext } from './context.js';
import { POLL_MS } from './drain.js';
import { ratioOf, runRounds, runsOf, type Figure } from './rounds.js';
import { leaseholdDrain, type LeaseholdDrainRun } from './throughput.js';
import { idleHosts, type IdleHostsRun } from './idle-hosts.js';
import { benchBaseline } from './baseline.js';
import { floorDrain } from './pg-floor.js';

const HOSTS = [1, 2, 4] as const;
const IDLE_HOSTS = [1, 4] as const;
const FLOOR_PROCESSES = [1, 4] as const;
const THIS_BUILD = { build: 'this build', supervise: undefined };
const CHILDREN_PER_HOST = 1;
const CLAIM_BATCH = 64;
export const HOSTS_RISE_TARGET = 1;
export const HOSTS_SERVER_GROWTH_TARGET = 1.1;

export interface HostsRow {
  hosts: number;
  jobs_per_sec: Stat;
  /** The server's CPU ms per 1,000 jobs from a tenth of the jobs done (serverCpuMsPer1k). */
  server_cpu_ms_per_1k_jobs: Stat;
  /** The same over the whole run, the hosts' start-up and the enqueue included (serverCpuWholeMsPer1k). */
  server_cpu_whole_ms_per_1k_jobs: Stat;
  /** The supervisors' and children's, from a tenth of the jobs done. */
  cpu_ms_per_1k_jobs: Stat;
}

export interface HostsSection {
  method: string;
  jobs: number;
  results: HostsRow[];
  /** Within each round: jobs/s of 2 hosts over 1; the server's CPU per job of 4 hosts over 1, once all run and whole. */
  two_over_one: Stat;
  server_cpu_four_over_one: Stat;
  server_cpu_whole_four_over_one: Stat;
  /** The bare loop in K processes (floorDrain): jobs/s and the server's CPU over the whole run, and 4 processes over 1 within a round. */
  floor: { processes: number; jobs_per_sec: Stat; server_cpu_whole_ms_per_1k_jobs: Stat }[];
  floor_server_cpu_whole_four_over_one: Stat;
  /** K hosts idle on an empty queue: the server's CPU ms, its transactions and WAL bytes per second, and their connections. */
  idle: {
    /** 'this build', or the baseline's folder (LEASEHOLD_BENCH_BASELINE). */
    build: string;
    hosts: number;
    server_cpu_ms_per_sec: Stat;
    transactions_per_sec: Stat;
    wal_bytes_per_sec: Stat;
    connections: Stat;
  }[];
}

const key = (hosts: number) => `hosts:${hosts}`;
const floorKey = (processes: number) => `floor:${processes}`;
const SERVER_CPU: Figure = (run) => (run as LeaseholdDrainRun).serverCpuMsPer1k;
const SERVER_CPU_WHOLE: Figure = (run) => run.serverCpuWholeMsPer1k;

export async function runHosts(ctx: BenchContext): Promise<HostsSection> {
  const rounds = await runRounds(ctx, 'PostgreSQL hosts', [
    ...HOSTS.map((hosts) => ({
      key: key(hosts),
      label: `${hosts} supervisor(s) × ${CHILDREN_PER_HOST} child`,
      drain: () => leaseholdDrain(ctx, CHILDREN_PER_HOST, CLAIM_BATCH, 'postgres', { hosts }),
    })),
    ...FLOOR_PROCESSES.map((processes) => ({
      key: floorKey(processes),
      label: `the bare loop in ${processes} process(es)`,
      drain: () => floorDrain(ctx, true, { connections: processes, apart: true }),
    })),
  ]);
  const baseline = benchBaseline();
  const builds =
    baseline === undefined ? [THIS_BUILD] : [THIS_BUILD, { build: baseline.folder, supervise: baseline.supervise }];
  const idle = builds.flatMap((build) => IDLE_HOSTS.map((hosts) => ({ ...build, hosts, runs: [] as IdleHostsRun[] })));
  for (let round = 0; round < ctx.sizes.runs; round++)
    for (const arm of idle) {
      ctx.progress(`PostgreSQL idle hosts round ${round + 1}/${ctx.sizes.runs}: ${arm.hosts} (${arm.build})`);
      arm.runs.push(await idleHosts(ctx, arm.hosts, arm.supervise));
    }
  const ratio = (a: string, b: string, figure?: Figure) => {
    const within = ratioOf(rounds, a, b, figure);
    if (within === undefined) throw new Error(`no ratio of ${a} over ${b}: a run is missing`);
    return within;
  };
  return {
    method:
      `K supervisors started together, each with LEASEHOLD_HOST bench-host-<k>, ${CHILDREN_PER_HOST} child and claim_batch ${CLAIM_BATCH}, ` +
      `drain ${ctx.sizes.jobs} no-op jobs enqueued in bulk; jobs/s as section 9 (polled every ${POLL_MS.postgres} ms); ` +
      "server CPU: every postgres process from a tenth of the jobs done to the last (section 9's), and the postmaster and its backends " +
      'from before the enqueue to after the supervisors stopped (whole)',
    jobs: ctx.sizes.jobs,
    results: HOSTS.map((hosts) => {
      const runs = runsOf<LeaseholdDrainRun>(rounds, key(hosts));
      return {
        hosts,
        jobs_per_sec: summarize(runs.map((run) => run.jobsPerSec)),
        server_cpu_ms_per_1k_jobs: summarize(runs.map((run) => run.serverCpuMsPer1k ?? Number.NaN)),
        server_cpu_whole_ms_per_1k_jobs: summarize(runs.map((run) => run.serverCpuWholeMsPer1k ?? Number.NaN)),
        cpu_ms_per_1k_jobs: summarize(runs.map((run) => run.cpuMsPer1k ?? Number.NaN)),
      };
    }),
    two_over_one: ratio(key(2), key(1)),
    server_cpu_four_over_one: ratio(key(4), key(1), SERVER_CPU),
    server_cpu_whole_four_over_one: ratio(key(4), key(1), SERVER_CPU_WHOLE),
    floor: FLOOR_PROCESSES.map((processes) => {
      const runs = runsOf(rounds, floorKey(processes));
      return {
        processes,
        jobs_per_sec: summarize(runs.map((run) => run.jobsPerSec)),
        server_cpu_whole_ms_per_1k_jobs: summarize(runs.map((run) => run.serverCpuWholeMsPer1k ?? Number.NaN)),
      };
    }),
    floor_server_cpu_whole_four_over_one: ratio(floorKey(4), floorKey(1), SERVER_CPU_WHOLE),
    idle: idle.map(({ build, hosts, runs }) => ({
      build,
      hosts,
      server_cpu_ms_per_sec: summarize(runs.map((run) => run.serverCpuMsPerSec)),
      transactions_per_sec: summarize(runs.map((run) => run.transactionsPerSec)),
      wal_bytes_per_sec: summarize(runs.map((run) => run.walBytesPerSec)),
      connections: summarize(runs.map((run) => run.connections)),
    })),
  };
}

/** Issue 53's two targets of the section: [id, what, value, met]. */
export function hostsTargets(
  section: HostsSection | undefined,
): [string, string, number | undefined, (value: number) => boolean][] {
  return [
    [
      '53-hosts-rise',
      `PostgreSQL: 2 hosts × ${CHILDREN_PER_HOST} child >= 1 host (jobs/s, within a round)`,
      section?.two_over_one.median,
      (v) => v >= HOSTS_RISE_TARGET,
    ],
    [
      '53-hosts-server-cpu',
      `PostgreSQL: the server's CPU per job once every host runs, 4 hosts over 1 <= ${HOSTS_SERVER_GROWTH_TARGET}x (within a round)`,
      section?.server_cpu_four_over_one.median,
      (v) => v <= HOSTS_SERVER_GROWTH_TARGET,
    ],
  ];
}

/** The section's lines in the table. */
export function hostsLines(h: HostsSection): string[] {
  return [
    `24. hosts on one PostgreSQL queue (issue 53): ${h.method} (jobs/s; CPU ms per 1k jobs)`,
    columnsTable(h.results, [
      ['hosts', (r) => String(r.hosts)],
      ['jobs/s (steady)', (r) => stat(r.jobs_per_sec)],
      ['supervisors + children', (r) => stat(r.cpu_ms_per_1k_jobs)],
      ['server, all running', (r) => stat(r.server_cpu_ms_per_1k_jobs)],
      ['server, whole run', (r) => stat(r.server_cpu_whole_ms_per_1k_jobs)],
    ]),
    figures(
      ['within a round', 'ratio'],
      [
        ['jobs/s: 2 hosts / 1', h.two_over_one],
        ["the server's CPU per job, all running: 4 hosts / 1", h.server_cpu_four_over_one],
        ['the same over the whole run: 4 hosts / 1', h.server_cpu_whole_four_over_one],
        ['the bare loop, over the whole run: 4 processes / 1', h.floor_server_cpu_whole_four_over_one],
      ],
    ),
    "the bare loop (section 25's, timeline rows included) in processes of its own:",
    columnsTable(h.floor, [
      ['processes', (r) => String(r.processes)],
      ['jobs/s', (r) => stat(r.jobs_per_sec)],
      ['server, whole run', (r) => stat(r.server_cpu_whole_ms_per_1k_jobs)],
    ]),
    'idle hosts on an empty queue (per second, the whole server):',
    columnsTable(h.idle, [
      ['build', (r) => r.build],
      ['hosts', (r) => String(r.hosts)],
      ['server CPU ms', (r) => stat(r.server_cpu_ms_per_sec)],
      ['transactions', (r) => stat(r.transactions_per_sec)],
      ['WAL bytes', (r) => stat(r.wal_bytes_per_sec)],
      ['connections', (r) => stat(r.connections)],
    ]),
  ];
}
