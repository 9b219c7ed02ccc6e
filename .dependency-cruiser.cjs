/**
 * The house rules, checked in `npm test` (test/layering.unit.test.ts runs dependency-cruiser with
 * this file). Read them as a paragraph:
 *
 * The web layer (src/web: the edge and its two transports, API routes, the app's pages, public views, the OpenAPI
 * and AsyncAPI documents) calls services. Services (src/services: flows and their sessions,
 * work, brainstorms, team, templates, search, exports, notifications, webhooks, jobs, auth,
 * mail) use storage and the engine. Storage (src/storage: connection, migrations, queries,
 * LISTEN/NOTIFY) knows only itself. The engine (src/engine) is pure and knows no one. Beside
 * them the platform (src/platform: config, errors, ids, logging, metrics registry, the worker
 * pool) may be imported by anyone and imports nothing of ours. On the ground floor with it,
 * the contract (src/contract: the wire's schemas and vocabulary, one source for the edge's
 * validation, the documents and the services' views) may be imported by anyone and imports
 * only the platform. The operator's command (src/cli) stands beside the web layer and may
 * also run storage's maintenance. The composition root (src/main.ts, src/compose.ts) wires
 * them all. Nothing imports upwards, and nothing goes round in a circle: not between files,
 * not between folders.
 */
const layer = (name) => `^src/${name}/`;

/** Each layer, and the layers it may import besides itself, the contract and the platform. */
const LAYERS = {
  engine: [],
  storage: [],
  services: ['storage', 'engine'],
  web: ['services'],
  cli: ['services', 'storage'],
};

module.exports = {
  forbidden: [
    ...Object.entries(LAYERS).map(([name, below]) => ({
      name: `${name}-imports-only-${[...below, 'contract', 'platform'].join('-')}`,
      comment: `src/${name} imports itself, ${[...below, 'contract', 'platform'].map((b) => `src/${b}`).join(', ')} and packages, nothing else of ours`,
      severity: 'error',
      from: { path: layer(name) },
      to: {
        path: '^(src|workers)/',
        pathNot: [layer(name), layer('contract'), layer('platform'), ...below.map(layer)],
      },
    })),
    {
      name: 'contract-imports-only-platform',
      comment:
        'src/contract is the wire every layer speaks: it imports the platform and packages, nothing else of ours',
      severity: 'error',
      from: { path: layer('contract') },
      to: { path: '^(src|workers)/', pathNot: [layer('contract'), layer('platform')] },
    },
    {
      name: 'platform-imports-only-platform',
      comment: 'src/platform is the floor everyone stands on: it imports nothing else of ours',
      severity: 'error',
      from: { path: layer('platform') },
      to: { path: '^(src|workers)/', pathNot: layer('platform') },
    },
    {
      name: 'nothing-imports-the-composition-root',
      comment: 'src/main.ts and src/compose.ts wire the layers; no layer reaches back up to them',
      severity: 'error',
      from: { path: '^(src|workers)/', pathNot: '^src/main\\.ts$' },
      to: { path: '^src/compose\\.ts$' },
    },
    {
      name: 'workers-run-engine-renderers-and-what-ifs',
      comment:
        'the pool workers run the engine, the export renderers and large what-ifs (the flows service’s command lists), with the contract and the platform',
      severity: 'error',
      from: { path: '^workers/' },
      to: {
        path: '^src/',
        pathNot: [
          '^src/engine/',
          '^src/services/exports/',
          '^src/services/flows/',
          '^src/contract/',
          '^src/platform/',
        ],
      },
    },
    {
      name: 'uws-only-in-the-uws-transport',
      comment:
        'uWebSockets.js is imported in src/web/http/uws alone (transport.ts imports that folder only when it serves)',
      severity: 'error',
      from: { path: '^(src|workers)/', pathNot: '^src/web/http/uws/' },
      to: { path: 'node_modules/uWebSockets\\.js/' },
    },
    {
      name: 'ws-only-in-the-node-transport',
      comment: 'the WebSocket protocol on node:http is src/web/http/node/websocket.ts',
      severity: 'error',
      from: { path: '^(src|workers)/', pathNot: '^src/web/http/node/' },
      to: { path: 'node_modules/ws/' },
    },
    {
      name: 'no-circular-files',
      comment: 'no two modules depend on each other, however far round',
      severity: 'error',
      from: { path: '^(src|workers)/' },
      to: { circular: true },
    },
    {
      name: 'no-circular-folders',
      comment: 'no two folders depend on each other, however far round',
      severity: 'error',
      scope: 'folder',
      from: { path: '^(src|workers)/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
