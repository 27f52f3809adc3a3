/**
 * Without @opentelemetry/api resolvable (a resolve hook refuses it, as in an
 * application that did not install it), the library, the supervisor and its
 * children run a job, and nothing of tracing is loaded: the hook's record
 * holds the refused look-up and no OpenTelemetry module, nor leasehold's spans.
 */
import { execa } from 'execa';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';

useProcessGuard();
const newDir = tempDir('leasehold-tracing-absent-');
const HIDE = path.resolve('test/fixtures/tracing/hide-otel.mjs');
const ENQUEUE = path.resolve('test/fixtures/tracing/enqueue-once.mjs');
const INDEX = path.resolve('dist/src/index.js');

describe('tracing without @opentelemetry/api', () => {
  it('runs a job through the library, the supervisor and a child, loading nothing of tracing', async () => {
    const dir = newDir();
    const modules = path.join(dir, 'modules.txt');
    writeFileSync(modules, '');
    const env = { NODE_OPTIONS: `--import ${HIDE}`, LEASEHOLD_TEST_MODULES: modules };
    const sup = await startSupervisor({ dir, env, classes: [{ name: 'plain', handler: 'succeed' }] });
    const enqueued = await execa('node', [ENQUEUE, INDEX, sup.database], { env, stdin: 'ignore' });
    const id = Number(enqueued.stdout.trim());
    expect((await sup.queue.waitFor(id, { timeoutMs: 20_000 })).status).toBe('SUCCEEDED');
    await sup.stop();

    const record = readFileSync(modules, 'utf8').split('\n');
    // The hook was in every process: the supervisor's, the child's and the producer's entry points went through it.
    for (const entry of ['dist/supervisor/main.js', 'dist/child/main.js', 'dist/src/index.js'])
      expect(record.some((line) => line.endsWith(entry))).toBe(true);
    expect(record).toContain('refused @opentelemetry/api');
    expect(record.filter((line) => !line.startsWith('refused') && line.includes('@opentelemetry'))).toEqual([]);
    expect(record.filter((line) => line.endsWith('/tracing/spans.js'))).toEqual([]);
  });
});
