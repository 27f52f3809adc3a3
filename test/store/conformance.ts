/**
 * The contract every Store driver must keep. A driver's test file calls
 * `storeConformance` with a factory that opens a fresh, empty, migrated
 * store per test; the suites live in ./conformance/.
 */
import { describe } from 'vitest';
import type { Store } from '../../src/store/types.js';
import type { TestClock } from '../helpers/clock.js';
import { conformanceContext } from './conformance/context.js';
import { jobSuites } from './conformance/jobs.js';
import { leaseSuites } from './conformance/leases.js';
import { operatorSuites } from './conformance/operators.js';
import { scheduleSuites } from './conformance/schedules.js';

export { SWEEP } from './conformance/context.js';

export function storeConformance(driverName: string, openStore: (clock: TestClock) => Promise<Store>): void {
  describe(`Store conformance: ${driverName}`, () => {
    const c = conformanceContext(openStore);
    jobSuites(c);
    leaseSuites(c);
    operatorSuites(c);
    scheduleSuites(c);
  });
}
