/**
 * Issue 17, item 13: `X-Content-Type-Options: nosniff` on every answer; file downloads carry
 * `Content-Disposition: attachment` and `Content-Security-Policy: sandbox`; a plain-http
 * APP_URL on a host other than this machine refuses to start (its cookies would lose
 * `__Host-` and `Secure`) unless APP_ALLOW_INSECURE=1, saying why.
 */
import { spawn } from 'node:child_process';
import t from 'tap';
import { newFlow, startFlowServer } from '../helpers/flows.ts';
import { startChildServer } from '../services/jobs/child.ts';
import type { Attachment, Brainstorm, FlowSummary } from '../helpers/wire.ts';
import { item } from '../helpers/server.ts';

t.test('nosniff on every kind of answer', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, { name: 'Sniff', tasks: [{ name: 'A' }] });
  const published = (
    await s.api<FlowSummary>('POST', `/v1/flows/${flow.id}/publish`, { token: s.adminKey })
  ).body.publicUrl as string;
  const answers = {
    'a JSON read': await s.api('GET', '/v1/me', { token: s.adminKey }),
    'a 404': await s.api('GET', '/v1/nothing-here'),
    'a 401': await s.api('GET', '/v1/me', { token: 'fpk_wrong' }),
    'a refusal before the body': await s.api('POST', '/v1/flows', { body: { name: 'x' } }),
    'a 413': await s.api('POST', '/v1/flows', {
      token: s.adminKey,
      raw: 'x'.repeat(5 * 1024 * 1024),
      headers: { 'content-type': 'application/json' },
    }),
    'a public page': await s.api('GET', new URL(published).pathname),
    'an app page': await s.api('GET', '/app/signin'),
    'the OpenAPI document': await s.api('GET', '/v1/openapi.json'),
  };
  for (const [what, res] of Object.entries(answers))
    t.equal(res.headers.get('x-content-type-options'), 'nosniff', `${what} (${res.status})`);
  t.equal(
    (await fetch(s.app.metricsUrl)).headers.get('x-content-type-options'),
    'nosniff',
    'the metrics listener',
  );
});

t.test('downloads are attachments that may run nothing', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, { name: 'Files', tasks: [{ name: 'A' }] });
  const task = `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}`;
  const html = '<script>alert(document.cookie)</script>';
  const file = (
    await s.api<Attachment>('POST', `${task}/attachments?name=page.html`, {
      token: s.adminKey,
      raw: html,
      headers: { 'content-type': 'text/html' },
    })
  ).body;
  const board = (
    await s.api<Brainstorm>('POST', '/v1/brainstorms', {
      token: s.adminKey,
      body: { name: 'B', ideas: [{ title: 'I' }] },
    })
  ).body;
  const idea = `/v1/brainstorms/${board.id}/ideas/${item(board.ideas).id}`;
  const ideaFile = (
    await s.api<Attachment>('POST', `${idea}/attachments?name=page.html`, {
      token: s.adminKey,
      raw: html,
      headers: { 'content-type': 'text/html' },
    })
  ).body;
  for (const [what, path] of [
    ['task attachment', `${task}/attachments/${file.id}/content`],
    ['idea file', `${idea}/attachments/${ideaFile.id}/content`],
  ]) {
    const res = await s.api('GET', path!, { token: s.adminKey });
    t.equal(res.status, 200);
    t.equal(res.text, html, `${what}: the bytes as stored`);
    t.match(
      res.headers.get('content-disposition'),
      /^attachment; filename\*=UTF-8''page\.html$/,
      `${what}: saved, not shown`,
    );
    t.equal(
      res.headers.get('content-security-policy'),
      'sandbox',
      `${what}: and shown anyway, it runs nothing`,
    );
    t.equal(res.headers.get('x-content-type-options'), 'nosniff');
  }
});

t.test(
  'a plain-http APP_URL on another host refuses to start, unless APP_ALLOW_INSECURE=1',
  async (t) => {
    const s = await startFlowServer(t);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: s.databaseUrl,
        PORT: '0',
        APP_URL: 'http://plan.lan/app',
      },
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    t.equal(code, 1, 'exits 1');
    t.equal(stdout, '', 'never listened');
    t.match(
      stderr,
      /^flowplan: APP_URL http:\/\/plan\.lan\/app is plain http on a host other than this machine: .*Secure.*__Host-.*APP_ALLOW_INSECURE=1.*\n$/,
      'one line that says why and what to do',
    );
    t.notMatch(stderr, /\n\s+at /, 'no stack trace');

    const allowed = await startChildServer(t, s.databaseUrl, {
      APP_URL: 'http://plan.lan/app',
      APP_ALLOW_INSECURE: '1',
    });
    t.equal((await fetch(`${allowed.url}/healthz`)).status, 200, 'allowed when asked for');
  },
);
