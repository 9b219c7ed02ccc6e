/** `npm start`: config → database (embedded or DATABASE_URL) → migrations → HTTP; SIGTERM drains. */
import { refuseUnsupportedNode } from './platform/node-version.js';

// First: the rest is imported only once the Node version is known to be one flowplan runs on.
refuseUnsupportedNode();
const { startApp, StartRefused } = await import('./compose.ts');
const { createLogger } = await import('./platform/logging.ts');
const { loadConfig } = await import('./platform/config.ts');
const { DataDirInUse, EmbeddedPostgresUnavailable } = await import('./storage/embedded.ts');
const { ListenRefused } = await import('./web/http/listener.ts');
const { UwsUnavailable } = await import('./web/http/transport.ts');

const config = (() => {
  try {
    return loadConfig();
  } catch (error) {
    // A setting that cannot work is one line naming it, not a stack trace.
    process.stderr.write(`flowplan: ${(error as Error).message}\n`);
    process.exit(1);
  }
})();
const log = createLogger(config);
const app = await startApp(config, { log }).catch((error: unknown) => {
  // A cause with a known way out is one line, not a stack trace.
  const known = [
    EmbeddedPostgresUnavailable,
    UwsUnavailable,
    ListenRefused,
    StartRefused,
    DataDirInUse,
  ];
  if (known.some((kind) => error instanceof kind))
    process.stderr.write(`flowplan: ${(error as Error).message}\n`);
  else log.fatal({ err: error }, 'start-up failed');
  process.exit(1);
});

// The first start shows its secrets once: only their hashes are stored.
const banner = [`\nflowplan is running at ${app.url}`, `Web app: ${app.appUrl}/signin`];
if (app.demo) {
  banner.push(
    `\nDemo workspace ${app.demo.workspaceId}, admin API key (shown once, keep it):\n\n  ${app.demo.key}`,
  );
  if (app.demo.person) {
    banner.push(
      `\nSign in to the web app as ${app.demo.person.email}, the workspace's owner, with this password (shown once):\n\n  ${app.demo.person.password}`,
    );
  }
  banner.push(
    `\nIn your shell (the README's examples use these):\n\n  export BASE=${app.url} KEY=${app.demo.key}\n  curl -H "Authorization: Bearer $KEY" $BASE/v1/me`,
  );
}
if (app.noWorkspace) {
  banner.push(
    '\nThe database has no workspace, and this start makes no demo (FLOWPLAN_DEMO=0, the default under NODE_ENV=production).' +
      ' Make one with the operator CLI: npx flowplan workspace create --name N --json, then npx flowplan key create' +
      ' --workspace W --role admin --scopes all --json (README: Operator CLI).',
  );
}
process.stdout.write(`${banner.join('\n')}\n\n`);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: draining in-flight requests');
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
