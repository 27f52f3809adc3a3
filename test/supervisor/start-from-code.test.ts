/**
 * startSupervisor: an application starts the supervisor from its own code
 * (a node process of its own here, as an app is), with a TypeScript handler,
 * waits for its children, enqueues, waits for the job's outcome, reloads,
 * and stops; its process then exits by itself, nothing left running. A
 * config with a problem is refused with the same lines as `--check-config`.
 */
import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { isPidAlive } from '../../src/pids.js';
import { trackLogFile, trackWorkersDatabase, useProcessGuard } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

useProcessGuard();
const newDir = tempDir('leasehold-start-from-code-');
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const built = (file: string) => pathToFileURL(path.join(ROOT, 'dist', file)).href;

/** The application: prints one JSON line of what it saw, then returns from its main without exiting. */
const APP = `
import { readFileSync } from 'node:fs';
import { openQueue, startSupervisor } from '${built('index.js')}';

const [config, database] = process.argv.slice(2);
let sup;
try {
  // A .json file stands for a config the app builds as an object.
  const source = config.endsWith('.json') ? JSON.parse(readFileSync(config, 'utf8')) : config;
  sup = await startSupervisor({ config: source, console: false });
} catch (error) {
  console.log(JSON.stringify({ refused: error.message }));
  process.exit(0);
}
await sup.ready;
const queue = await openQueue({ database });
const { id } = await queue.enqueue({ class: 'receipts', payload: { orderId: 7 } });
const job = await queue.waitFor(id, { timeoutMs: 20_000 });
await sup.reload();
await queue.close();
await sup.stop();
// What would keep the process alive now (stdout's own handle aside).
const left = process.getActiveResourcesInfo().filter((kind) => !['TTYWrap', 'PipeWrap'].includes(kind));
console.log(JSON.stringify({ id: sup.id, status: job.status, result: job.result, left }));
`;

const RECEIPT = `export default async function handler(job: { payload: { orderId: number } }): Promise<string> {
  return \`receipt for \${job.payload.orderId}\`;
}
`;

function appIn(dir: string, handler: string, as: 'yaml' | 'object' = 'yaml'): { config: string; database: string } {
  const database = path.join(dir, 'queue.db');
  writeFileSync(path.join(dir, 'app.mjs'), APP);
  writeFileSync(path.join(dir, 'receipt.ts'), RECEIPT);
  const content = {
    database,
    log: { file: path.join(dir, 'supervisor.log') },
    classes: [{ name: 'receipts', handler, poll_seconds: 0.1 }],
  };
  const config = path.join(dir, as === 'yaml' ? 'queue.yaml' : 'queue.json');
  writeFileSync(config, as === 'yaml' ? stringify(content) : JSON.stringify(content));
  trackWorkersDatabase(database);
  trackLogFile(path.join(dir, 'supervisor.log'));
  return { config, database };
}

describe('startSupervisor', () => {
  it.each(['yaml', 'object'] as const)(
    "runs an app's job through its children and stops: the app's process exits by itself (a config as %s)",
    async (as) => {
      const dir = newDir();
      // An object's relative paths are the working directory's: the app runs in dir.
      const { config, database } = appIn(dir, './receipt.ts', as);
      const app = await execa('node', ['app.mjs', config, database], { cwd: dir, reject: false, timeout: 60_000 });
      expect(app.exitCode, app.stderr).toBe(0);
      const seen = JSON.parse(app.stdout.trim().split('\n').at(-1)!) as {
        status: string;
        result: unknown;
        id: string;
        left: string[];
      };
      expect(seen.left, 'nothing left to keep the process alive').toEqual([]);
      expect(seen.status).toBe('SUCCEEDED');
      expect(seen.result).toBe('receipt for 7');
      expect(seen.id).toMatch(/:\d+:[0-9a-f]{6}$/);
      const log = (await import('node:fs')).readFileSync(path.join(dir, 'supervisor.log'), 'utf8');
      expect(log).toContain('"event":"CONFIG_RELOADED"');
      expect(log).toContain('"event":"SHUTDOWN_COMPLETE"');
      // Its children ended with it: none of the pids it logged is alive.
      const pids = [...log.matchAll(/"pid":(\d+),"event":"CHILD_SPAWNED"/g)].map((m) => Number(m[1]));
      expect(pids.length).toBeGreaterThan(0);
      expect(pids.filter(isPidAlive)).toEqual([]);
    },
  );

  it('refuses a config with a problem, saying it as --check-config does', async () => {
    const dir = newDir();
    const { config, database } = appIn(dir, './missing.ts');
    const app = await execa('node', ['app.mjs', config, database], { cwd: dir, reject: false, timeout: 60_000 });
    expect(app.exitCode, app.stderr).toBe(0);
    const { refused } = JSON.parse(app.stdout.trim()) as { refused: string };
    expect(refused).toBe(`${config}: classes[0].handler: class receipts: no such file ${path.join(dir, 'missing.ts')}`);
  });
});
