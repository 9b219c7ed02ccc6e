/**
 * Follow a workspace's events live over the WebSocket, resuming where it left off: the last
 * cursor is kept in a file, so a restart (or a dropped connection) loses and repeats nothing.
 *
 *   FLOWPLAN_URL=http://127.0.0.1:8080 KEY=fpk_… node --import tsx examples/follow-events.ts [--types task.completed,task.unblocked]
 *
 * KEY needs flows:read. Without a saved cursor it starts from now (GET /v1/events gives the cursor of now).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import WebSocket from 'ws';

const base = process.env.FLOWPLAN_URL ?? 'http://127.0.0.1:8080';
const key = process.env.KEY;
if (!key) throw new Error('Set KEY to an API key with flows:read (npm start prints one)');
const types = process.argv.includes('--types')
  ? process.argv[process.argv.indexOf('--types') + 1]
  : undefined;
const CURSOR_FILE = process.env.CURSOR_FILE ?? '.follow-events.cursor';
const exitAfter = Number(process.env.EXIT_AFTER ?? Infinity); // events, then stop (for tests)

let cursor = existsSync(CURSOR_FILE) ? readFileSync(CURSOR_FILE, 'utf8').trim() : null;
if (!cursor) {
  const now = await fetch(`${base}/v1/events`, { headers: { authorization: `Bearer ${key}` } });
  if (!now.ok) throw new Error(`GET /v1/events: ${now.status} ${await now.text()}`);
  cursor = ((await now.json()) as { next: string }).next;
}
let seen = 0;

function follow(): void {
  const query = new URLSearchParams({ after: cursor!, ...(types ? { types } : {}) });
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/stream?${query}`, [
    'flowplan.v1.json',
    `bearer.${key}`,
  ]);
  ws.on('message', (data) => {
    const event = JSON.parse(String(data)) as {
      cursor: string;
      type: string;
      data: Record<string, unknown>;
    };
    console.log(`${event.cursor} ${event.type} ${JSON.stringify(event.data)}`);
    writeFileSync(CURSOR_FILE, (cursor = event.cursor));
    if (++seen >= exitAfter) process.exit(0);
  });
  ws.on('unexpected-response', (_req, res) => {
    throw new Error(`the stream was refused: ${res.statusCode}`);
  });
  ws.on('error', () => {}); // a close follows
  // 4000: too slow; 1012: the server restarts; anything else but a refused credential: resume after a pause.
  ws.on('close', (code, reason) => {
    if (code === 4401 || code === 4410) throw new Error(`stream closed: ${code} ${String(reason)}`);
    setTimeout(follow, 1000);
  });
}
follow();
