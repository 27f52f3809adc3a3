/**
 * The dashboard's files, all local (no CDN, no network): htmx and Pico from
 * their installed packages, app.js and app.css from static/ beside this
 * module (`npm run build` copies them next to the built code). Read once,
 * when the dashboard starts.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface Asset {
  body: string;
  type: string;
}

const require = createRequire(import.meta.url);

const FILES: Record<string, () => string> = {
  'htmx.min.js': () => require.resolve('htmx.org/dist/htmx.min.js'),
  'pico.min.css': () => require.resolve('@picocss/pico/css/pico.min.css'),
  'app.js': () => fileURLToPath(new URL('./static/app.js', import.meta.url)),
  'app.css': () => fileURLToPath(new URL('./static/app.css', import.meta.url)),
};

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

export function loadAssets(): Map<string, Asset> {
  return new Map(
    Object.entries(FILES).map(([name, locate]) => [
      name,
      { body: readFileSync(locate(), 'utf8'), type: TYPES[name.split('.').pop() ?? ''] ?? 'application/octet-stream' },
    ]),
  );
}
