import { afterEach } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { storeConformance } from './conformance.js';

// Each test in a fresh schema, dropped (CASCADE) after it. clock_skew_ms=0: the
// suite's clock is the only clock, so the sweeper's margin for hosts' clocks
// would only shift its expectations (postgres-driver.test.ts checks the margin).
const schemas = schemaPool('lh_conf');
afterEach(schemas.dropAll);

storeConformance('postgres', (clock) => PostgresStore.open({ database: pgUrl(schemas.next(), { clock_skew_ms: '0' }), clock }));
