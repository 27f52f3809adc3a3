/** Section 14: the wall time of a `leasehold` command, spawn to exit; the commands take turns so that a noisy neighbour weighs on all alike. */
import { spawnSync } from 'node:child_process';
import { summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { sqliteFile } from './database.js';
import { writeConfig, writeNoopHandler } from './leasehold.js';
import { LEASEHOLD_CLI } from './processes.js';

/** The median of each target command (--db, SQLite) must be within this (issues 14 and 32). */
export const CLI_TARGET_MS = 150;
/** The commands the target is about (the other rows are for scale). */
export const CLI_TARGET_COMMANDS = ['stats --json', 'show 1', 'list', 'enqueue'];

export interface CliSection {
  runs: number;
  /** Wall ms, spawn to exit, of each command; the first row is the floor. */
  commands: { command: string; wall_ms: Stat }[];
}

const CLASS = 'bench-cli';

/** Runs `node ...args` to its end; its wall time in ms. */
function wallMs(args: string[]): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 });
  const ms = performance.now() - started;
  if (result.status !== 0)
    throw new Error(
      `node ${args.join(' ')} exited ${String(result.status ?? result.signal)}: ${result.stderr.toString()}`,
    );
  return ms;
}

export function runCli(ctx: BenchContext): CliSection {
  const dir = ctx.dirs.make('cli');
  const database = sqliteFile(dir);
  const config = writeConfig(dir, { database, handler: writeNoopHandler(dir), processes: 1 });
  const leasehold = (...args: string[]) => [LEASEHOLD_CLI, '--db', database, ...args];
  const enqueue = leasehold('enqueue', CLASS, '--allow-unknown-class', '--payload', '{"n":1}');
  const commands: [string, string[]][] = [
    ['node -e 0 (the floor)', ['-e', '0']],
    ['stats --json', leasehold('stats', '--json')],
    ['show 1', leasehold('show', '1')],
    ['list', leasehold('list')],
    ['enqueue', enqueue],
    // For scale: reading a queue.yaml loads its parser and validator (yaml, zod).
    ['--config queue.yaml stats --json', [LEASEHOLD_CLI, '--config', config, 'stats', '--json']],
  ];
  const rounds = ctx.sizes.cliRuns;
  const times = commands.map((): number[] => []);
  ctx.progress(`cli: ${commands.length} commands, ${rounds} rounds`);
  wallMs(leasehold('migrate'));
  wallMs(enqueue);
  for (let round = -1; round < rounds; round++) {
    commands.forEach(([, args], i) => {
      const ms = wallMs(args);
      if (round >= 0) times[i]?.push(ms);
    });
  }
  return {
    runs: rounds,
    commands: commands.map(([command], i) => ({ command, wall_ms: summarize(times[i] ?? [], 1) })),
  };
}

/** Issue 54: the slowest target command's median over `node -e 0`'s, measured side by side in the same rounds. */
export const CLI_FLOOR_RATIO_TARGET = 1.9;

/** The slowest target command's median over the floor's (the first row). */
export function slowestOverFloor(section: CliSection | undefined): number | undefined {
  const slowest = slowestCommand(section);
  const floor = section?.commands[0]?.wall_ms.median;
  return slowest === undefined || floor === undefined ? undefined : slowest / floor;
}

/** The slowest median of the target's commands. */
export function slowestCommand(section: CliSection | undefined): number | undefined {
  const medians =
    section?.commands.filter((c) => CLI_TARGET_COMMANDS.includes(c.command)).map((c) => c.wall_ms.median) ?? [];
  return medians.length === 0 ? undefined : Math.max(...medians);
}
