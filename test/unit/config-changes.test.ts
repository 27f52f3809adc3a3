/** What a reload would change, and what it must refuse: pure, on validated configs. */
import { describe, expect, it } from 'vitest';
import { configChanges } from '../../src/config/changes.js';
import { configSchema, type LeaseholdConfig } from '../../src/config/schema.js';

function config(raw: Record<string, unknown>): LeaseholdConfig {
  return {
    ...configSchema.parse({ database: '/q.db', classes: [{ name: 'a', handler: '/a.mjs' }], ...raw }),
    file: '/queue.yaml',
  };
}

describe('configChanges', () => {
  it('names each change by class name, so a class added in the middle is one addition', () => {
    const before = config({
      classes: [
        { name: 'a', handler: '/a.mjs' },
        { name: 'c', handler: '/c.mjs', processes: 2 },
      ],
    });
    const after = config({
      classes: [
        { name: 'a', handler: '/a.mjs', max_runtime_seconds: 60 },
        { name: 'b', handler: '/b.mjs' },
        { name: 'c', handler: '/c.mjs', processes: 3 },
      ],
      sweeper: { interval_seconds: 5 },
    });
    expect(configChanges(before, after)).toEqual({
      changes: [
        'sweeper.interval_seconds: 10 → 5',
        'classes.a.max_runtime_seconds: 300 → 60',
        'classes.c.processes: 2 → 3',
        'classes.b: added',
      ],
      refused: [],
    });
  });

  it('refuses the database, host, http and log file (each once, with why); log.level may change', () => {
    const before = config({});
    const after = config({
      database: '/other.db',
      host: 'h2',
      http: { port: 9000 },
      log: { level: 'debug', file: '/x.log' },
    });
    const { refused, changes } = configChanges(before, after);
    expect(refused.map((reason) => reason.split(' ')[0])).toEqual(['database', 'host', 'log', 'http']);
    expect(changes).toContain('log.level: "info" → "debug"');
    expect(configChanges(before, config({ log: { level: 'debug' } })).refused).toEqual([]);
  });

  it('the same config twice changes nothing, whatever file it came from', () => {
    expect(configChanges(config({}), { ...config({}), file: '/elsewhere.yaml' })).toEqual({ changes: [], refused: [] });
  });
});
