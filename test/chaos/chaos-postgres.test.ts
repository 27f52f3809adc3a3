import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { expectChaosHolds } from './run-chaos.js';

const POSTGRES_CONFIG = fileURLToPath(new URL('../../scripts/chaos.postgres.yaml', import.meta.url));
const newDir = tempDir('leasehold-chaos-pg-test-');
const schemas = schemaPool('lh_chaos');

/**
 * scripts/chaos.postgres.yaml with a fresh schema and everything else kept:
 * the handler as an absolute path (the yaml's is relative to its folder), the
 * log in the run's folder.
 */
function configIn(dir: string, database: string): string {
  const file = path.join(dir, 'chaos.postgres.yaml');
  const text = readFileSync(POSTGRES_CONFIG, 'utf8')
    .replace(/^database: .*$/m, `database: ${database}`)
    .replace(/^log: .*$/m, `log: { level: info, file: ${path.join(dir, 'supervisor.log')} }`)
    .replace(/^(\s+handler: )\.\.\/dist\/scripts\/chaos-handler\.js.*$/m, `$1${path.resolve(path.dirname(POSTGRES_CONFIG), '../dist/scripts/chaos-handler.js')}`);
  writeFileSync(file, text);
  return file;
}

describe('chaos on PostgreSQL: the guarantees hold under SIGKILL, SIGSTOP and supervisor death', () => {
  it('60 seconds of damage, zero violations', { timeout: 360_000 }, async () => {
    const dir = newDir();
    const config = configIn(dir, pgUrl(schemas.next()));
    await expectChaosHolds(['--config', config, '--dir', dir]);
  });
});
