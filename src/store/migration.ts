/** One numbered schema step of a driver; append-only, never edited once shipped. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The statuses of a job someone holds: partial indexes of both drivers cover them. */
export const IN_FLIGHT = `status IN ('CLAIMED', 'RUNNING')`;
