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
await Promise.all(
  ['@sinclair/typebox', 'ajv/dist/2020.js', 'ajv-formats', 'env-schema', 'postgres', 'pino'].map(
    (name) => import(name),
  ),
);
