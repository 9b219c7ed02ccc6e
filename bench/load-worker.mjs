// A thread of bench:load's clients: tsx's hooks do not reach worker threads on Node 20, so
// the thread registers them before it imports the TypeScript client.
const { register } = await import('tsx/esm/api');
register();
const { main } = await import('./load-client.ts');
await main();
