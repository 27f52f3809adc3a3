import { readFileSync } from 'node:fs';

/** A line the fixture handlers succeed and fan-in append to their payload's markFile. */
export interface Mark {
  id: number;
  attempt: number;
  ts: number;
  parents?: { id: number; status: string; result: unknown }[];
}

export const marksIn = (file: string): Mark[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Mark);
