import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { expectChaosHolds, HALF_MINUTE_RUN, NO_MINIMUM_DAMAGE } from './run-chaos.js';

const POSTGRES_CONFIG = fileURLToPath(new URL('../../scripts/chaos.postgres.yaml', import.meta.url));
const newDir = tempDir('leasehold-chaos-pg-test-');
const schemas = schemaPool('lh_chaos');

/**
 * scripts/chaos.postgres.yaml with a fresh schema, named by the sessions'
 * application_name too (--db-faults terminates those backends and no
 * other), and everything else kept: the handlers as absolute paths (the
 * yaml's are relative to its folder), the log in the run's folder.
 */
function configIn(dir: string): string {
  const schema = schemas.next();
  const file = path.join(dir, 'chaos.postgres.yaml');
  const handler = path.resolve(path.dirname(POSTGRES_CONFIG), '../dist/scripts/chaos-handler.js');
  const text = readFileSync(POSTGRES_CONFIG, 'utf8')
    .replace(/^database: .*$/m, `database: ${pgUrl(schema, { application_name: schema })}`)
    .replace(/^log: .*$/m, `log: { level: info, file: ${path.join(dir, 'supervisor.log')} }`)
    .replace(/^(\s+handler: )\.\.\/dist\/scripts\/chaos-handler\.js.*$/gm, `$1${handler}`);
  writeFileSync(file, text);
  return file;
}

describe('chaos on PostgreSQL: the guarantees hold under SIGKILL, SIGSTOP and supervisor death', () => {
  it('30 seconds of damage, zero violations, every job SUCCEEDED', { timeout: 360_000 }, async () => {
    const dir = newDir();
    await expectChaosHolds(
      ['--config', configIn(dir), '--dir', dir, '--seconds', '30', '--jobs', '120', '--seed', '7'],
      HALF_MINUTE_RUN,
      330_000,
    );
  });

  it(
    "20 seconds of damage while the queue's backends are terminated every 1-3 s (--db-faults): zero violations, the supervisor never exits",
    { timeout: 300_000 },
    async () => {
      const dir = newDir();
      // The backend kills are the point; the other damage is mixed in, not required.
      const minimums = { ...NO_MINIMUM_DAMAGE, jobs: 60, faults: { backend_kills: 3, backends_terminated: 3 } };
      await expectChaosHolds(
        ['--config', configIn(dir), '--dir', dir, '--seconds', '20', '--jobs', '80', '--seed', '11', '--db-faults'],
        minimums,
        270_000,
      );
    },
  );
});
