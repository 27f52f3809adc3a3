/**
 * The numeric options of every command. yargs' `number` type turns "abc"
 * into NaN before anyone can quote it, so these are strings that yargs' own
 * `coerce` (and fastArgs, which honours it) turns into a number: a plain
 * decimal within the option's range, else one line naming the option and
 * the word given (`--limit: expected an integer from 1 to 10000, got "abc"`).
 */
import type { Options } from 'yargs';
import { InvalidInputError } from '../errors.js';

export interface NumberRange {
  /** Whole numbers only. */
  integer: boolean;
  min: number;
  /** Absent: no upper bound. */
  max?: number;
  /** True: the value must be above `min`, not equal to it. */
  aboveMin?: boolean;
}

const INTEGER = /^[+-]?\d+$/;
/** No exponent, hex, "Infinity" or blank: what an operator means by a number. */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/** An option table for `--name`: `describe` and `default` as yargs takes them, the range enforced by `coerce`; a bare `--name` is refused, not read as its default. */
export function numberOption(name: string, range: NumberRange, table: { describe: string; default?: number }): Options {
  return { ...table, type: 'string', requiresArg: true, coerce: (raw: unknown) => parseNumber(name, range, raw) };
}

/** The option's word as a number in range; a default arrives as a number already and is held to the same range. */
function parseNumber(name: string, range: NumberRange, raw: unknown): number {
  if (Array.isArray(raw)) throw new InvalidInputError('USAGE', `--${name}: given more than once`);
  const text = String(raw);
  const value = (range.integer ? INTEGER : DECIMAL).test(text) ? Number(text) : Number.NaN;
  const inRange =
    (range.integer ? Number.isSafeInteger(value) : Number.isFinite(value)) &&
    (range.aboveMin === true ? value > range.min : value >= range.min) &&
    (range.max === undefined || value <= range.max);
  if (!inRange)
    throw new InvalidInputError('USAGE', `--${name}: expected ${describeRange(range)}, got ${JSON.stringify(text)}`);
  return value;
}

/** In the config schema's words: "an integer from 0 to 65535", "a number > 0", "an integer >= 0". */
function describeRange({ integer, min, max, aboveMin }: NumberRange): string {
  const kind = integer ? 'an integer' : 'a number';
  if (max !== undefined) return `${kind} from ${min} to ${max}`;
  return `${kind} ${aboveMin === true ? '>' : '>='} ${min}`;
}
