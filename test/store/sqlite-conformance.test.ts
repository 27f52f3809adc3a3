import { SqliteStore } from '../../src/store/sqlite/store.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';
import { storeConformance } from './conformance.js';

const newDir = tempDir();

storeConformance('sqlite', {
  openStore: (clock) => SqliteStore.open({ path: dbPathIn(newDir()), clock }),
  openSame: (store, clock) => SqliteStore.open({ path: (store as SqliteStore).connection.name, clock }),
  countStarts: async (store) =>
    ((store as SqliteStore).connection.prepare('SELECT count(*) AS n FROM class_starts').get() as { n: number }).n,
});
