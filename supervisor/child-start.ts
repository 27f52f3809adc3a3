import diff from 'microdiff';
import type { ClassConfig } from '../src/config/schema.js';

/**
 * What a child is started with beside its id and the database: its class
 * config and the result cap. A child keeps what it was started with, so a
 * reload that changes any of it replaces the child; the number of processes
 * and the schedules are the supervisor's business, not the child's.
 */
function childStart(config: ClassConfig, resultLimitBytes: number): object {
  const { processes: _processes, schedules: _schedules, ...childConfig } = config;
  return { ...childConfig, resultLimitBytes };
}

/** Whether children started with the first config may keep running under the second. */
export function sameChildStart(
  before: ClassConfig,
  beforeResultLimit: number,
  after: ClassConfig,
  afterResultLimit: number,
): boolean {
  return diff(childStart(before, beforeResultLimit), childStart(after, afterResultLimit)).length === 0;
}
