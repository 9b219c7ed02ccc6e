#!/usr/bin/env node
/**
 * The operator command. In a development checkout (the TypeScript sources and tsx, a
 * devDependency, both there) it runs src/cli through tsx, so it never runs a stale build;
 * in a production tree (`npm run build`, then `npm ci --omit=dev`) it runs the built
 * dist/src/cli with plain node. Either way the Node version is checked before the rest loads.
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

if (existsSync(new URL('../src/cli/main.ts', import.meta.url)) && installed('tsx/esm/api')) {
  const { register } = await import('tsx/esm/api');
  register();
  (await import('../src/platform/node-version.ts')).refuseUnsupportedNode();
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
