#!/usr/bin/env node
/**
 * The operator command. In a development checkout (the TypeScript sources and tsx, a
 * devDependency, both there) it runs src/cli through tsx, so it never runs a stale build;
 * in a production tree (`npm run build`, then `npm ci --omit=dev`) it runs the built
 * dist/src/cli with plain node. Either way the Node version is checked before the rest loads.
 *
 * Help (`--help`, `help COMMAND`) and usage errors are answered from src/cli's plain JavaScript
 * (dispatch.js and the specs it reads) before tsx is registered: registering it alone costs
 * about a quarter of a second, more than the help itself.
 */
import { existsSync } from 'node:fs';

const installed = (specifier) => {
  try {
    import.meta.resolve(specifier);
    return true;
  } catch {
    return false;
  }
};

/**
 * The packages of ES modules every command loads (the settings' schema, the Postgres driver),
 * loaded by plain Node before tsx registers: once a loader is registered, Node 20 resolves and
 * loads each module an import reaches on the loader's thread, about 2 ms a module, and typebox
 * alone is 200 of them (test/preload.mjs does the same for the tests).
 */
const COMMAND_PACKAGES = ['@sinclair/typebox', 'ajv-formats', 'env-schema', 'postgres'];

if (existsSync(new URL('../src/cli/main.ts', import.meta.url)) && installed('tsx/esm/api')) {
  (await import('../src/platform/node-version.js')).refuseUnsupportedNode();
  const answered = (await import('../src/cli/dispatch.js')).prepare(process.argv.slice(2));
  if (typeof answered === 'number') process.exit(answered);
  await Promise.all(COMMAND_PACKAGES.map((name) => import(name)));
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
} else if (existsSync(new URL('../dist/src/cli/main.js', import.meta.url))) {
  (await import('../dist/src/platform/node-version.js')).refuseUnsupportedNode();
  await import('../dist/src/cli/main.js');
} else {
  process.stderr.write(
    'flowplan: no build to run: run `npm run build` (or install the dev dependencies to run the sources)\n',
  );
  process.exit(1);
}
