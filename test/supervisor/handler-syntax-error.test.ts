/**
 * A handler with a syntax error is refused naming the file, line and column
 * of the error, not just `Unexpected token ';'`: in the handler itself, in a
 * module it imports, and in a CommonJS handler. (`supervise --check-config`:
 * start-up and a reload run the same check.)
 */
import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { SUPERVISE_BIN } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';

const newDir = tempDir('leasehold-syntax-');

/** The one line `supervise --check-config` refuses a config with, its handler being `handler` (written in a fresh folder with `files`). */
async function refusal(handler: string, files: Record<string, string>): Promise<{ dir: string; line: string }> {
  const dir = newDir();
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  const config = path.join(dir, 'queue.yaml');
  const database = path.join(dir, 'queue.db');
  writeFileSync(config, stringify({ database, classes: [{ name: 'work', handler: `./${handler}` }] }));
  const check = await execa('node', [SUPERVISE_BIN, '--config', config, '--check-config'], {
    reject: false,
    timeout: 30_000,
  });
  expect(check.exitCode, check.stderr).toBe(2);
  const lines = check.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return { dir, line: lines[0]! };
}

const BROKEN = 'export default async function handler(job) {\n  const total = ;\n  return total;\n}\n';

describe('a handler with a syntax error', () => {
  it('is refused naming its file, line and column', async () => {
    const { dir, line } = await refusal('broken.mjs', { 'broken.mjs': BROKEN });
    expect(line).toContain(`cannot load handler ${path.join(dir, 'broken.mjs')}: SyntaxError: Unexpected token ';'`);
    expect(line).toMatch(new RegExp(`\\(at ${path.join(dir, 'broken.mjs')}:2:17\\)$`));
  });

  it('in a module the handler imports: that module is named', async () => {
    const { dir, line } = await refusal('handler.mjs', {
      'handler.mjs': "import { helper } from './helper.mjs';\nexport default async () => helper();\n",
      'helper.mjs': 'export function helper() {\n  return [1, 2;\n}\n',
    });
    expect(line).toContain(`cannot load handler ${path.join(dir, 'handler.mjs')}: SyntaxError:`);
    expect(line).toMatch(new RegExp(`\\(at ${path.join(dir, 'helper.mjs')}:2:\\d+\\)$`));
  });

  it('thrown by its code as it loads (JSON.parse at the top level): the line that threw is named', async () => {
    const { dir, line } = await refusal('settings.mjs', {
      'settings.mjs': "const settings = JSON.parse('{ nope }');\nexport default async () => settings;\n",
    });
    expect(line).toMatch(new RegExp(`: SyntaxError: .*JSON.* \\(at ${path.join(dir, 'settings.mjs')}:1:\\d+\\)$`));
  });

  it('in a CommonJS handler too', async () => {
    const { dir, line } = await refusal('broken.cjs', {
      'broken.cjs': 'module.exports = async function handler() {\n  return 1 +;\n};\n',
    });
    expect(line).toMatch(
      new RegExp(`SyntaxError: Unexpected token ';' \\(at ${path.join(dir, 'broken.cjs')}:2:13\\)$`),
    );
  });
});
