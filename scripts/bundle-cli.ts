/**
 * `node dist/scripts/bundle-cli.js`, the build's last step: the `leasehold`
 * command as a few files in dist/cli/ instead of some eighty modules, since
 * a short command's time went mostly to finding and loading them (issue 54).
 * Each command stays a chunk of its own, loaded only when it runs; packages
 * stay in node_modules.
 *
 * The bundle sits one folder below dist/, as dist/src/'s modules do, so that
 * the paths its modules take from their own location still hold: dist/ for
 * the stack's own frames, package.json above, and beside it the handler probe
 * (an entry of its own) and the dashboard's static files (copied).
 */
import { cpSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const DIST = fileURLToPath(new URL('../', import.meta.url));

await build({
  entryPoints: { leasehold: `${DIST}src/cli/leasehold.js`, 'handler-probe': `${DIST}src/config/handler-probe.js` },
  outdir: `${DIST}cli`,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
cpSync(`${DIST}src/dashboard/static`, `${DIST}cli/static`, { recursive: true });
