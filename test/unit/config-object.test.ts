/**
 * A config given as an object (startSupervisor({ config: {...} })): checked
 * as a file's content is, its relative paths the working directory's, and
 * the application's own object left as it was.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFromObject, readConfig } from '../../src/config/load.js';
import type { ConfigObject } from '../../src/config/schema.js';

const folder = path.resolve('/srv/app');

describe('a config object', () => {
  it('resolves its relative paths from the folder given (the working directory by default), and keeps a copy', () => {
    const raw: ConfigObject = { database: './data/queue.db', classes: [{ name: 'mail', handler: './jobs/mail.ts' }] };
    const config = configFromObject(raw, folder);
    expect(config.database).toBe(path.join(folder, 'data/queue.db'));
    expect(config.classes[0]?.handler).toBe(path.join(folder, 'jobs/mail.ts'));
    expect(config.source).toEqual(raw);
    expect(Object.isFrozen(config.source)).toBe(true);
    // The application's own object is not frozen with the config.
    expect(Object.isFrozen(raw)).toBe(false);
    raw.classes.push({ name: 'later', handler: './jobs/later.ts' });
    expect(config.classes).toHaveLength(1);
    expect(readConfig(raw).classes).toHaveLength(2);
  });

  it('says what is wrong as a file does, naming itself (config object) in the folder', () => {
    expect(() => configFromObject({ database: '', classes: [] } as ConfigObject, folder)).toThrow(
      `${path.join(folder, '(config object)')}: database`,
    );
  });
});
