import { afterEach } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { adminClient, pgUrl, schemaPool } from '../helpers/postgres.js';
import { storeConformance } from './conformance.js';

// Each test in a fresh schema, dropped (CASCADE) after it.
const schemas = schemaPool('lh_conf');
afterEach(schemas.dropAll);

const schemaOf = (store: unknown) => (store as PostgresStore).schema as string;

storeConformance('postgres', {
  openStore: (clock) => PostgresStore.open({ database: pgUrl(schemas.next()), clock }),
  openSame: (store, clock) => PostgresStore.open({ database: pgUrl(schemaOf(store)), clock }),
  countStarts: async (store) => {
    const client = await adminClient(schemaOf(store));
    try {
      return (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM class_starts')).rows[0]!.n;
    } finally {
      await client.end();
    }
  },
});
