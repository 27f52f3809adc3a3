/**
 * A PostgreSQL store's time is the server's, as guarantee 11 (Time is the database's)
 * says, even in a process whose wall clock is 20 s ahead.
 */
import { execa } from 'execa';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FAKETIME_LIBRARY } from '../helpers/faketime.js';
import { migrate, openStore } from '../../src/store/open.js';
import { adminClient, pgUrl, schemaPool } from '../helpers/postgres.js';

const schemas = schemaPool('lh_server_clock');
const OPEN_STORE = pathToDist('src/store/open.js');
const LEASEHOLD_BIN = pathToDist('cli/leasehold.js');

function pathToDist(module: string): string {
  return path.join(fileURLToPath(new URL('../../dist/', import.meta.url)), module);
}

async function serverNow(): Promise<number> {
  const admin = await adminClient();
  try {
    const { rows } = await admin.query<{ now: string }>(
      'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now',
    );
    return Number(rows[0]!.now);
  } finally {
    await admin.end();
  }
}

describe("a PostgreSQL store's clock", () => {
  it("is the server's in a process whose wall clock is 20 s ahead", async () => {
    const script = `
      const { openStore } = await import(${JSON.stringify(OPEN_STORE)});
      const store = await openStore(process.argv[1]);
      process.stdout.write(JSON.stringify({ store: store.clock.now(), wall: Date.now() }));
      await store.close();`;
    const before = await serverNow();
    const { stdout } = await execa('node', ['--input-type=module', '-e', script, pgUrl(schemas.next())], {
      env: { LD_PRELOAD: FAKETIME_LIBRARY, FAKETIME: '+20s', FAKETIME_DONT_FAKE_MONOTONIC: '1' },
    });
    const after = await serverNow();
    const read = JSON.parse(stdout) as { store: number; wall: number };
    // The process's own clock is off by the 20 s; the store's reading is between two of the server's.
    expect(read.wall - read.store).toBeGreaterThan(19_000);
    expect(read.store).toBeGreaterThanOrEqual(before);
    expect(read.store).toBeLessThanOrEqual(after);
  });

  it("stamps what the CLI enqueues from that process on the server's clock: the job is due now, not in 20 s", async () => {
    const database = pgUrl(schemas.next());
    await migrate({ database });
    const before = await serverNow();
    const { stdout } = await execa(
      'node',
      [LEASEHOLD_BIN, '--db', database, 'enqueue', 'work', '--payload', '{}', '--allow-unknown-class', '--json'],
      {
        env: { LD_PRELOAD: FAKETIME_LIBRARY, FAKETIME: '+20s', FAKETIME_DONT_FAKE_MONOTONIC: '1' },
      },
    );
    const after = await serverNow();
    const { id } = JSON.parse(stdout) as { id: number };
    const store = await openStore(database);
    try {
      const job = await store.jobGet({ id });
      expect(job?.run_at).toBeGreaterThanOrEqual(before);
      expect(job?.run_at).toBeLessThanOrEqual(after);
    } finally {
      await store.close();
    }
  });
});
