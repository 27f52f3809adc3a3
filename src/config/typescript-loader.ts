/**
 * Handler and middleware modules written in TypeScript, without a build
 * step. A Node that strips types itself (`process.features.typescript`,
 * Node 22.18 and later, or 22.6 with --experimental-strip-types) imports a
 * `.ts` file as it is. Any other Node needs a loader: tsx, an optional peer
 * of leasehold, found where the application installed it. Its `register()`
 * APIs hook module loading (`module.register`) and turn source maps on, so
 * a stack names the `.ts` file and line.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LeaseholdError } from '../errors.js';

const TYPESCRIPT = /\.(?:ts|mts|cts)$/;

export const isTypeScript = (file: string): boolean => TYPESCRIPT.test(file);

/**
 * tsx 4's APIs that register its hooks (`register()`): for ES modules, and
 * for CommonJS, which is what a `.ts` file is where no package.json says
 * `"type": "module"`. `node --import tsx` registers both.
 */
const TSX_APIS = ['./cjs/api', './esm/api'] as const;

/** Leasehold's own folder: a loader installed beside it (in the application's node_modules, or in this project's). */
const OWN_FOLDER = fileURLToPath(new URL('.', import.meta.url));

/** Registered once a process: every later `.ts` import goes through the same hooks. */
let registered: Promise<void> | undefined;

/**
 * Make a `.ts` module importable in this process: nothing to do where Node
 * strips types; otherwise tsx, resolved from the module's folder, the
 * working directory, then leasehold's own folder. Throws
 * HANDLER:NO_TYPESCRIPT_LOADER, saying what to install, when none has it.
 */
export function loadTypeScriptSupport(file: string): Promise<void> {
  if ((process.features as { typescript?: unknown }).typescript) return Promise.resolve();
  return (registered ??= registerTsx(file).catch((error: unknown) => {
    registered = undefined;
    throw error;
  }));
}

async function registerTsx(file: string): Promise<void> {
  const found = tsxFrom([path.dirname(file), process.cwd(), OWN_FOLDER]);
  if (found === undefined)
    throw new LeaseholdError(
      'HANDLER:NO_TYPESCRIPT_LOADER',
      `${file} is TypeScript, and Node ${process.version} cannot strip types: install tsx in the application (npm install --save-dev tsx), or run Node 22.18 or later`,
      { retryable: false },
    );
  for (const api of found) {
    const { register } = (await import(pathToFileURL(api).href)) as { register: () => unknown };
    register();
  }
}

/**
 * Where tsx's APIs are, from the first folder that has tsx: read from its
 * package's `exports` (`require.resolve` would pick their CommonJS builds,
 * which register the hooks at the wrong URL).
 */
function tsxFrom(folders: readonly string[]): string[] | undefined {
  for (const folder of folders) {
    let manifest: string;
    try {
      manifest = createRequire(path.join(folder, 'noop.js')).resolve('tsx/package.json');
    } catch {
      continue; // not installed where this folder looks: the next one
    }
    const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as {
      exports?: Record<string, { import?: { default?: string } }>;
    };
    const apis = TSX_APIS.map((api) => exports?.[api]?.import?.default);
    if (apis.every((api) => api !== undefined)) return apis.map((api) => path.join(path.dirname(manifest), api));
  }
  return undefined;
}
