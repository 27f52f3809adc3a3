import { afterEach } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { storeConformance } from './conformance.js';

// Each test in a fresh schema, dropped (CASCADE) after it.
const schemas = schemaPool('lh_conf');
afterEach(schemas.dropAll);

storeConformance('postgres', (clock) => PostgresStore.open({ database: pgUrl(schemas.next()), clock }));
