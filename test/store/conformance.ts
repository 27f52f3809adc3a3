/**
 * The contract every Store driver must keep. A driver's test file calls
 * `storeConformance` with a factory that opens a fresh, empty, migrated
 * store per test; the suites live in ./conformance/.
 */
import { describe } from 'vitest';
import type { Store } from '../../src/store/types.js';
import type { TestClock } from '../helpers/clock.js';
import { classSuites, type OpenSame } from './conformance/classes.js';
import { conformanceContext } from './conformance/context.js';
import { dashboardSuites } from './conformance/dashboard.js';
import { costSuites } from './conformance/cost.js';
import { flowSuites } from './conformance/flows.js';
import { failureDetailSuites } from './conformance/failure-detail.js';
import { hotPathSuites } from './conformance/hot-path.js';
import { jobSuites } from './conformance/jobs.js';
import { leaseSuites } from './conformance/leases.js';
import { limitSuites } from './conformance/limits.js';
import { operatorSuites } from './conformance/operators.js';
import { outcomeReadSuites } from './conformance/outcome-reads.js';
import { rollupSuites } from './conformance/rollup.js';
import { scheduleSuites } from './conformance/schedules.js';
import { traceContextSuites } from './conformance/trace-context.js';

export { SWEEP } from './conformance/context.js';

/** What a driver's test file gives: fresh stores, a second store on one's database, and a count of its class_starts rows. */
export interface ConformanceDriver {
  openStore: (clock: TestClock) => Promise<Store>;
  openSame: OpenSame;
  countStarts: (store: Store) => Promise<number>;
}

export function storeConformance(driverName: string, { openStore, openSame, countStarts }: ConformanceDriver): void {
  describe(`Store conformance: ${driverName}`, () => {
    const c = conformanceContext(openStore);
    jobSuites(c);
    hotPathSuites(c);
    leaseSuites(c);
    limitSuites(c);
    operatorSuites(c);
    costSuites(c);
    failureDetailSuites(c);
    scheduleSuites(c);
    classSuites(c, openSame, countStarts);
    dashboardSuites(c);
    rollupSuites(c, openSame);
    flowSuites(c);
    outcomeReadSuites(c);
    traceContextSuites(c);
  });
}
