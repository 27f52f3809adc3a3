/**
 * Handlers and middleware written in TypeScript run without a build step:
 * `--check-config` accepts them, the supervisor's children run them, and a
 * failure's stack names the `.ts` file and line. On Node 20 the loader is
 * tsx, found where the application installed it (here: this project's own
 * node_modules). Without it, see test/cli/package.test.ts.
 */
import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor, SUPERVISE_BIN } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';

useProcessGuard();
const newDir = tempDir('leasehold-typescript-');

/** Type-only syntax on every line that matters: a JavaScript loader would refuse this file. */
const RECEIPT = `interface Receipt {
  orderId: number;
  total: number;
}

export default async function handler(job: { payload: Receipt }): Promise<string> {
  const { orderId, total } = job.payload satisfies Receipt;
  if (total < 0) throw new Error(\`order \${orderId}: a negative total\`);
  return \`receipt for \${orderId as number}\`;
}
`;

const TAGGED = `import type { Middleware } from 'leasehold';

const tagged: Middleware = async (job, ctx, next) => {
  const result = (await next()) as string;
  return \`\${result} (tagged)\`;
};
export default tagged;
`;

function writeFiles(files: Record<string, string>): string {
  const dir = newDir();
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

async function checkConfig(dir: string, handler: string) {
  const config = path.join(dir, 'queue.yaml');
  writeFileSync(config, stringify({ database: path.join(dir, 'queue.db'), classes: [{ name: 'receipts', handler }] }));
  return execa('node', [SUPERVISE_BIN, '--config', config, '--check-config'], { reject: false, timeout: 30_000 });
}

describe('a TypeScript handler', () => {
  it('passes --check-config', async () => {
    const dir = writeFiles({ 'receipt.ts': RECEIPT });
    const check = await checkConfig(dir, './receipt.ts');
    expect(check.stderr).toBe('');
    expect(check.exitCode).toBe(0);
  });

  it('with a type error in its syntax is refused, naming the file and line', async () => {
    const dir = writeFiles({
      'receipt.ts': 'export default async function handler(job: { payload: }) {\n  return 1;\n}\n',
    });
    const check = await checkConfig(dir, './receipt.ts');
    expect(check.exitCode).toBe(2);
    expect(check.stderr).toContain(`cannot load handler ${path.join(dir, 'receipt.ts')}`);
    expect(check.stderr).toMatch(/receipt\.ts:1:\d+: ERROR: Unexpected "\}"$/m);
  });

  it("runs in the supervisor's children with TypeScript middleware; a failure's stack names the .ts line", async () => {
    const dir = writeFiles({ 'receipt.ts': RECEIPT, 'tagged.ts': TAGGED });
    const sup = await startSupervisor({
      dir,
      classes: [{ name: 'receipts', handler: path.join(dir, 'receipt.ts'), middleware: [path.join(dir, 'tagged.ts')] }],
    });
    const ok = await sup.queue.enqueue({ class: 'receipts', payload: { orderId: 7, total: 12 } });
    const bad = await sup.queue.enqueue({ class: 'receipts', payload: { orderId: 8, total: -1 }, maxRetries: 0 });
    expect((await sup.waitForJob(ok.id, 'SUCCEEDED')).job.result).toBe('receipt for 7 (tagged)');
    await sup.waitForJob(bad.id, 'FAILED');
    const stack = (await sup.queue.get(bad.id))!.attempts[0]!.error_stack!;
    expect(stack).toContain('order 8: a negative total');
    // Line 8 of the source: the stack is mapped back from what the loader compiled.
    expect(stack).toMatch(new RegExp(`at handler \\(.*${path.join(dir, 'receipt.ts')}:8:\\d+\\)`));
    expect(await sup.stop()).toBe(0);
  });
});
