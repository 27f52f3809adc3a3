import { SqliteStore } from '../../src/store/sqlite/store.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';
import { storeConformance } from './conformance.js';

const newDir = tempDir();

storeConformance('sqlite', (clock) => SqliteStore.open({ path: dbPathIn(newDir()), clock }));
