/**
 * The cursor of Queue.events: an outcome's place in the order outcomes are
 * followed (../store/outcome-rows.ts), as text. Opaque to the application,
 * which only stores it and hands it back as `after`.
 */
import { InvalidInputError } from '../errors.js';
import { OUTCOMES_START, type OutcomePosition } from '../store/outcome-rows.js';

/** `after: FROM_THE_BEGINNING` reads every outcome still in the database, oldest first. */
export const FROM_THE_BEGINNING = '0';

const CURSOR_SHAPE = /^(\d{1,20})\.(\d{1,16})$/;

export function cursorOf(position: OutcomePosition): string {
  return `${position.txid}.${position.id}`;
}

/** The position a cursor names; InvalidInputError (INVALID_INPUT:CURSOR) for text no events iterator gave out. */
export function positionOf(cursor: string): OutcomePosition {
  if (cursor === FROM_THE_BEGINNING) return OUTCOMES_START;
  const match = typeof cursor === 'string' ? CURSOR_SHAPE.exec(cursor) : null;
  const id = Number(match?.[2]);
  if (match === null || !Number.isSafeInteger(id))
    throw new InvalidInputError(
      'CURSOR',
      `after must be a cursor an outcome carried, or '${FROM_THE_BEGINNING}', got ${JSON.stringify(String(cursor))}`,
    );
  return { txid: BigInt(match[1]!).toString(), id };
}

/** Whether `a` comes after `b`: by transaction id, then by event id. */
export function isAfter(a: OutcomePosition, b: OutcomePosition): boolean {
  if (a.txid !== b.txid) return BigInt(a.txid) > BigInt(b.txid);
  return a.id > b.id;
}
