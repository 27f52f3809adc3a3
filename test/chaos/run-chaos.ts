import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const CHAOS = fileURLToPath(new URL('../../dist/scripts/chaos.js', import.meta.url));

/**
 * Run the chaos program about 60 seconds with 240 jobs (unless `args` say
 * otherwise) and hold it to the bar: zero violations, enough of each kind of damage.
 */
export async function expectChaosHolds(args: string[]): Promise<void> {
  const run = await execa(process.execPath, [CHAOS, '--seconds', '60', '--jobs', '240', '--seed', '7', ...args], { reject: false });
  console.log(run.stdout);
  if (run.stderr) console.error(run.stderr);
  const summary = JSON.parse(run.stdout) as {
    jobs: number;
    damage: { child_kills: number; zombies: number; supervisor_kills: number };
    violations: Record<string, number>;
  };
  expect(summary.violations).toEqual({ lost: 0, double_commit: 0, zombie_writes: 0, database: 0, orphans: 0 });
  expect(summary.jobs).toBeGreaterThanOrEqual(200);
  expect(summary.damage.child_kills).toBeGreaterThanOrEqual(20);
  expect(summary.damage.zombies).toBeGreaterThanOrEqual(5);
  expect(summary.damage.supervisor_kills).toBeGreaterThanOrEqual(1);
  expect(run.exitCode).toBe(0);
}
