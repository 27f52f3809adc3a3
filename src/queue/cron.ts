/** Cron expressions and time zones, read by croner (its syntax: 5 fields, or 6 with seconds first, or 7 with a year). */
import { Cron } from 'croner';

/** A schedule's occurrence times; croner's own timer is never started (paused, no callback): the scheduler asks it for times. */
export function cronOf(expression: string, timezone: string): Cron {
  return new Cron(expression, { timezone, paused: true });
}

/** Why croner rejects an expression (or: it never matches), or undefined when it is usable. */
export function cronExpressionProblem(expression: string): string | undefined {
  try {
    return cronOf(expression, 'UTC').nextRun() === null ? 'it matches no time' : undefined;
  } catch (error) {
    return (error instanceof Error ? error.message : String(error)).replace(/^CronPattern: /, '');
  }
}

/** True for a time zone this Node.js knows (IANA names such as Europe/Berlin, and UTC). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
