/** `middleware:` as the loader reads it: top-level and per class, each class given its whole chain. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { tempDir } from '../helpers/temp.js';

const newDir = tempDir('leasehold-config-middleware-');

describe('loadConfig: middleware', () => {
  it('gives each class its whole middleware chain, the top-level modules first, resolved like handlers', () => {
    const dir = newDir();
    const file = path.join(dir, 'queue.yaml');
    writeFileSync(
      file,
      `
database: q.db
middleware: [./mw/report.js, /abs/tenant.js]
classes:
  - name: a
    handler: ./a.js
    middleware: [./mw/transaction.js]
  - name: b
    handler: ./b.js
`,
    );
    const config = loadConfig(file);
    expect(config.middleware).toEqual([path.join(dir, 'mw', 'report.js'), '/abs/tenant.js']);
    expect(config.classes[0]?.middleware).toEqual([
      path.join(dir, 'mw', 'report.js'),
      '/abs/tenant.js',
      path.join(dir, 'mw', 'transaction.js'),
    ]);
    expect(config.classes[1]?.middleware).toEqual(config.middleware);
  });
});
