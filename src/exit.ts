import { ConfigError, InvalidInputError, NotFoundError, SchemaMissingError } from './errors.js';

/** Exit codes of both binaries: 0 success, 1 runtime failure, 2 bad usage or bad input. */
export const EXIT = { OK: 0, FAILURE: 1, USAGE: 2 } as const;

/** Bad input is the caller's to fix (exit 2); anything else is ours (exit 1). */
export function exitCodeFor(error: unknown): number {
  return error instanceof ConfigError ||
    error instanceof InvalidInputError ||
    error instanceof NotFoundError ||
    error instanceof SchemaMissingError
    ? EXIT.USAGE
    : EXIT.FAILURE;
}

/** One line on stderr (a config error may add one line per problem), then exit. */
export function die(error: unknown, program: string): never {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${program}: ${message}\n`);
  process.exit(exitCodeFor(error));
}
