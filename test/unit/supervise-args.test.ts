/** supervise reads a plain command line without yargs, exactly as yargs reads it, and leaves every other line to yargs. */
import { describe, expect, it } from 'vitest';
import { plainArgs, yargsArgs } from '../../supervisor/args.js';

const PLAIN = [
  ['--config', 'queue.yaml'],
  ['--config=queue.yaml'],
  ['--config', 'q.yaml', '--check-config'],
  ['--check-config', '--config', './a b/q.yaml'],
  ['--config', 'q.yaml', '--watch'],
];

const NOT_PLAIN = [
  [],
  ['--help'],
  ['--version'],
  ['--config'],
  ['--config', ''],
  ['--config', 'a.yaml', '--config', 'b.yaml'],
  ['--config', 'a.yaml', 'extra'],
  ['--config', 'a.yaml', '--check-config=true'],
  ['--config', 'a.yaml', '--no-check-config'],
  ['--config', 'a.yaml', '--watch=false'],
  ['--configg', 'a.yaml'],
  ['--checkConfig', '--config', 'a.yaml'],
  ['-c', 'a.yaml'],
  ['--config', '-a-value-like-an-option.yaml'],
];

describe("supervise's command line", () => {
  it.each(PLAIN.map((argv) => [argv]))('reads a plain line as yargs does: %j', async (argv) => {
    const plain = plainArgs(argv);
    expect(plain).toBeDefined();
    const { config, 'check-config': checkConfig, watch } = await yargsArgs(argv);
    expect(plain).toEqual({ config, 'check-config': checkConfig, watch });
  });

  it.each(NOT_PLAIN.map((argv) => [argv]))('leaves the rest to yargs: %j', (argv) => {
    expect(plainArgs(argv)).toBeUndefined();
  });
});
