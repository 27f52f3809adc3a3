/** What the `effects` fixture handler recorded, and a class that runs it under a short lease. */
import { readFileSync } from 'node:fs';
import type { ClassSpec } from './supervisor.js';

/**
 * Effects jobs under a lease whose slack (3 s) is far under the clock
 * offsets the time tests make: a lease judged on a wrong clock would be
 * taken back.
 */
export const SHORT_LEASE_WORK: ClassSpec = {
  name: 'work',
  handler: 'effects',
  processes: 2,
  lease_seconds: 4,
  heartbeat_seconds: 1,
  max_retries: 3,
};

/** The job id of every handler start the file records, in order of id: a job twice means its handler ran twice. */
export function handlerStarts(effectsFile: string): number[] {
  return readFileSync(effectsFile, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { kind: string; id: number })
    .filter((effect) => effect.kind === 'start')
    .map((effect) => effect.id)
    .sort((x, y) => x - y);
}
