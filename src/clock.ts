/** Time as integer UTC epoch milliseconds, injectable so tests control what SQL sees as "now". */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
