/**
 * `--version` on both binaries prints the version in package.json and exits
 * 0, from any folder (the version is read from the package, not guessed
 * from the working directory).
 */
import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { LEASEHOLD_BIN, SUPERVISE_BIN } from './helpers.js';

const newDir = tempDir('leasehold-version-');
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

describe('--version', () => {
  it.each([
    ['leasehold --version', LEASEHOLD_BIN, ['--version']],
    ['leasehold --config F --version', LEASEHOLD_BIN, ['--config', 'queue.yaml', '--version']],
    ['supervise --version', SUPERVISE_BIN, ['--version']],
  ])("%s prints package.json's version and exits 0", async (_name, bin, args) => {
    const result = await execa('node', [bin, ...args], {
      reject: false,
      stdin: 'ignore',
      cwd: newDir(),
      timeout: 30_000,
    });
    expect({ exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr }).toEqual({
      exitCode: 0,
      stdout: version,
      stderr: '',
    });
  });
});
