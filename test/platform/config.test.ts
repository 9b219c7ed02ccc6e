/** Settings: one schema for the environment and for a test's overrides, refusals in one line. */
import t from 'tap';
import { loadConfig } from '../../src/platform/config.ts';

t.test('defaults, and what defaults to other settings', async (t) => {
  const config = loadConfig({});
  t.hasStrict(config, {
    port: 8080,
    baseUrl: 'http://127.0.0.1:8080',
    appUrl: 'http://127.0.0.1:8080/app',
    publicUrl: 'http://127.0.0.1:8080/p',
    mailFrom: 'flowplan <notifications@localhost>',
    metricsPort: 9464,
    demo: true,
    jobWorkers: true,
    trustProxy: null,
    maxBufferedBodyBytes: 64 * 1024 * 1024,
    workspaceBudgetPerMinute: 120,
    workspaceBudgetBurst: 240,
    whatIfConcurrency: 2,
    commandsOffloadWork: 100_000,
  });
  t.ok(Object.isFrozen(config));
  t.hasStrict(loadConfig({ PORT: '0', NODE_ENV: 'production' }), { metricsPort: 0, demo: false });
  t.hasStrict(loadConfig({ PORT: '' }), { port: 8080 }, 'empty is unset');
});

t.test('variables are read through the schema', async (t) => {
  t.hasStrict(
    loadConfig({
      BASE_URL: 'https://plan.example/',
      MAX_BUFFERED_BODY_BYTES: '2MiB',
      JOBS: '0',
      FLOWPLAN_DEMO: '1',
      WEBHOOK_RETRY_BASE_SECONDS: '0.5',
      TRUST_PROXY: '2',
      WORKSPACE_BUDGET_PER_MINUTE: '60',
      WORKSPACE_BUDGET_BURST: '600',
      WHAT_IF_CONCURRENCY: '4',
    }),
    {
      baseUrl: 'https://plan.example',
      appUrl: 'https://plan.example/app',
      maxBufferedBodyBytes: 2 * 1024 * 1024,
      jobWorkers: false,
      demo: true,
      webhookRetryBaseSeconds: 0.5,
      trustProxy: { hops: 2 },
      workspaceBudgetPerMinute: 60,
      workspaceBudgetBurst: 600,
      whatIfConcurrency: 4,
    },
  );
});

t.test('a value out of range is refused in one line naming the variable', async (t) => {
  const refusal = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  };
  t.equal(refusal({ PORT: '70000' }), 'PORT must be an integer from 0 to 65535, got "70000"');
  t.equal(refusal({ WORKERS: '1.5' }), 'WORKERS must be an integer from 1 to 256, got "1.5"');
  t.equal(refusal({ FLOWPLAN_DEMO: 'yes' }), 'FLOWPLAN_DEMO must be 1 or 0, got "yes"');
  t.equal(
    refusal({ WHAT_IF_CONCURRENCY: '0' }),
    'WHAT_IF_CONCURRENCY must be an integer from 1 to 10000, got "0"',
  );
  t.equal(
    refusal({ WORKSPACE_BUDGET_BURST: 'lots' }),
    'WORKSPACE_BUDGET_BURST must be an integer from 1 to 1000000000, got "lots"',
  );
  t.equal(
    refusal({ BASE_URL: 'plan.example' }),
    'BASE_URL must be an absolute URL, got "plan.example"',
  );
  t.equal(
    refusal({ MAX_BUFFERED_BODY_BYTES: '2 MB' }),
    'MAX_BUFFERED_BODY_BYTES must be a number of bytes of at least 1048576 (a suffix KiB, MiB, GiB or TiB may follow), got "2 MB"',
  );
  t.equal(
    refusal({ LOG_LEVEL: 'loud' }),
    'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
  );
  t.equal(
    refusal({ PORT: '-1', WORKERS: '0' }),
    'PORT must be an integer from 0 to 65535, got "-1"; WORKERS must be an integer from 1 to 256, got "0"',
    'every refused variable, still one line',
  );
});

t.test("a test's overrides meet the same ranges", async (t) => {
  t.hasStrict(loadConfig({}, { port: 0, rateLimitPerMinute: 5 }), {
    port: 0,
    baseUrl: 'http://127.0.0.1:0',
    metricsPort: 0,
    rateLimitPerMinute: 5,
  });
  t.throws(() => loadConfig({}, { rateLimitPerMinute: 0 }), {
    message: 'rateLimitPerMinute must be an integer from 1 to 1000000000, got 0',
  });
  t.throws(() => loadConfig({}, { cronCheckSeconds: 60 }), {
    message: 'cronCheckSeconds must be an integer from 1 to 45, got 60',
  });
  t.throws(() => loadConfig({ RATE_LIMIT_BURST: '10' }, { rateLimitBurst: -1 }), {
    message: 'rateLimitBurst must be an integer from 1 to 1000000000, got -1',
  });
});
