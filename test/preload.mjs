/**
 * Loaded before tsx (through NODE_OPTIONS, which test/run.ts sets) by every test file and every
 * command they run with the run's environment (the CLI's processes among them). On Node 20 each
 * module an ES import reaches after a loader registers is resolved and loaded on the loaders'
 * thread, about 2 ms of CPU a module: typebox alone is 200 modules. The packages below, loaded
 * first, cost plain Node's time, and the app's imports of them find them loaded. They are what
 * the settings and the database need, which a server and a CLI command alike load: the
 * server-only ones too would cost each CLI process more than they save (docs/performance.md,
 * "The suite's time"). Plain JavaScript, since tsx is not there yet; none has an effect on import.
 */
import module from 'node:module';

await Promise.all(
  ['@sinclair/typebox', 'ajv/dist/2020.js', 'ajv-formats', 'env-schema', 'postgres', 'pino'].map(
    (name) => import(name),
  ),
);

/**
 * tap starts each test file with @tapjs/processinfo (in its arguments, and in the NODE_OPTIONS
 * of what the file runs), whose module hook reads and measures every module a process loads to
 * list them for `tap --changed` and tap's own coverage, neither of which this project uses
 * (.taprc: coverage is Node's). Importing the app cost 0.6 s more CPU with it (3.7 against 3.1 s);
 * test/cli/, 10% more. tap has no setting to leave it out, and this file is imported before it:
 * its hook is not registered (test/preload.unit.test.ts). Should a tap release register it
 * another way, it is simply back.
 */
const fromProcessInfo = (specifier) => String(specifier).includes('/@tapjs/processinfo/');
const register = module.register;
module.register = function (specifier, ...rest) {
  if (fromProcessInfo(specifier)) return;
  return register.call(this, specifier, ...rest);
};
// Node 24.13 and later: processinfo registers synchronous hooks, from its own module.
const registerHooks = module.registerHooks;
if (registerHooks)
  module.registerHooks = function (hooks) {
    if (fromProcessInfo(new Error().stack)) return { deregister() {} };
    return registerHooks.call(this, hooks);
  };
