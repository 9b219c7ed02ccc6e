/**
 * The examples as a user runs them, each a process of its own against a real server:
 * examples/oauth-pkce.ts with Chromium doing the person's part (sign-in, consent, the redirect
 * to the loopback listener, then whatever else the browser asks that listener for), and
 * examples/poll-work.ts working a flow to the end with conditional MessagePack polls, and
 * examples/follow-events.ts following the event stream and resuming from its saved cursor.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { freePort } from '../../src/storage/embedded.ts';
import { artifact, openBrowser } from '../helpers/browser.ts';
import { startTestServer, until } from '../helpers/server.ts';
import { setUpPerson } from '../services/auth/agent.ts';
import type { Flow } from '../helpers/wire.ts';

interface Example {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function runExample(t: Test, file: string, args: string[], env: Record<string, string>): Example {
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(
    () => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** The issuer must be the server's real address (`iss` is compared): pick a free port first. */
t.test(
  'examples/oauth-pkce.ts with a real browser: signs in, refreshes, detects reuse, exits 0',
  async (t) => {
    const browser = await openBrowser(t);
    if (!browser) return;
    const port = await freePort();
    const s = await startTestServer(t, { port }, { PORT: String(port) });
    const person = await setUpPerson(s, { role: 'admin' });

    // The loopback listener used to crash on the browser's next request (its favicon) in most
    // runs: run the whole thing a few times.
    for (const run of [1, 2, 3]) {
      const example = runExample(t, 'examples/oauth-pkce.ts', [], {
        FLOWPLAN_URL: s.url,
        CLIENT_ID: person.clientId,
      });
      const printed = await until(
        async () => example.stdout(),
        (out) => /Open this address/.test(out) || example.child.exitCode !== null,
        60_000,
      );
      const address = /^\s+(http\S+)$/m.exec(printed)?.[1];
      if (!address) {
        t.fail(`run ${run}: no address printed\n${printed}\n${example.stderr()}`);
        return;
      }

      const context = await browser.newContext();
      const page = await context.newPage();
      const asked: string[] = [];
      page.on('request', (request) => void asked.push(request.url()));
      await page.goto(address);
      t.equal(
        new URL(page.url()).pathname,
        '/app/signin',
        `run ${run}: the authorize address leads to the app's sign-in`,
      );
      await page.fill('#email', person.email);
      await page.fill('#password', person.password);
      await Promise.all([page.waitForURL(/\/app\/consent/), page.click('button[type="submit"]')]);
      await Promise.all([
        page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/),
        page.click('button[value="approve"]'),
      ]);
      t.match(await page.textContent('body'), 'Signed in. You can close this window.');
      // What a browser asks a page's origin for next; a reload comes after the callback was used.
      const favicon = await page.evaluate(
        'fetch("/favicon.ico").then((r) => r.status, () => "refused")',
      );
      t.ok(
        favicon === 404 || favicon === 'refused',
        `run ${run}: the favicon after the callback is answered 404 or refused (${String(favicon)})`,
      );
      if (run === 1) await page.screenshot({ path: artifact('example-oauth-callback.png') });
      await context.close();

      const code = await example.exited;
      t.equal(code, 0, `run ${run}: exits 0${code === 0 ? '' : `\n${example.stderr()}`}`);
      const out = example.stdout();
      const me = JSON.parse(
        /^GET \/v1\/me as the person: (.+)$/m.exec(out)?.[1] ?? 'null',
      ) as Record<string, unknown> | null;
      t.match(
        me,
        { userId: person.userId, workspaceId: s.workspaceId, role: 'admin' },
        `run ${run}: /v1/me as the person`,
      );
      t.match(
        out,
        /^Refreshed: access token fpa_\S+, refresh token fpr_\S+/m,
        'the refresh printed new tokens',
      );
      t.match(
        out,
        /^Presenting the spent refresh token again answered 400 invalid_grant$/m,
        'reuse detected',
      );
      t.match(out, /now answers 401 CREDENTIAL_REVOKED$/m, 'and the whole sign-in revoked');
      t.ok(
        asked.some((url) => url.includes('/callback?code=')),
        'the browser went back to the loopback listener with a code',
      );
    }
  },
);

t.test(
  'examples/poll-work.ts works a flow to the end with conditional MessagePack polls',
  async (t) => {
    const s = await startTestServer(t);
    // Two independent starts, a join, and a task after it.
    const created = await s.api<Flow>('POST', '/v1/flows', {
      token: s.adminKey,
      body: {
        name: 'Polled',
        tasks: [
          { name: 'Spec' },
          { name: 'Build', after: [0] },
          { name: 'Copy' },
          { name: 'Review', after: [1, 2] },
          { name: 'Ship', after: [3] },
        ],
      },
    });
    t.equal(created.status, 201);
    const flowId = created.body.id as string;

    const example = runExample(t, 'examples/poll-work.ts', ['--until-done'], {
      FLOWPLAN_URL: s.url,
      KEY: s.adminKey,
    });
    const code = await example.exited;
    const out = example.stdout();
    t.equal(code, 0, `exits 0\n${out}\n${example.stderr()}`);
    for (const name of ['Spec', 'Build', 'Copy', 'Review', 'Ship'])
      t.match(out, new RegExp(`^completed ${name}\\b`, 'm'), `completed ${name}`);
    t.match(
      out,
      /^completed Spec, unblocking Build$/m,
      'says what a completion unblocked (Spec: Build)',
    );
    const summary = /^done: (\d+) completed, (\d+) polls, (\d+) answered 304$/m.exec(out);
    t.ok(summary, 'prints a summary');
    t.equal(Number(summary?.[1]), 5, 'completed all five');
    t.ok(Number(summary?.[3]) >= 1, 'saw at least one 304');

    const flow = await s.api<Flow>('GET', `/v1/flows/${flowId}`, { token: s.adminKey });
    t.same(
      flow.body.tasks.map((task: { status: string }) => task.status),
      ['done', 'done', 'done', 'done', 'done'],
      'every task of the flow is done',
    );
    t.equal(flow.body.doneCount, 5);
  },
);

t.test(
  'examples/follow-events.ts follows live, and a restart resumes from the saved cursor',
  async (t) => {
    const s = await startTestServer(t);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'follow-events-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const env = {
      FLOWPLAN_URL: s.url,
      KEY: s.adminKey,
      CURSOR_FILE: `${dir}/cursor`,
      EXIT_AFTER: '2',
    };
    const first = runExample(t, 'examples/follow-events.ts', ['--types', 'flow.created'], env);
    // It starts from now: the flows are made once its socket is open.
    await until(
      async () =>
        (await s.metrics()).match(
          /flowplan_stream_subscribers\{transport="websocket"\} (\d+)/,
        )?.[1],
      (n) => n === '1',
      30_000,
    );
    for (const name of ['One', 'Two', 'Three', 'Four'])
      t.equal(
        (await s.api('POST', '/v1/flows', { token: s.adminKey, body: { name } })).status,
        201,
      );
    t.equal(await first.exited, 0, first.stderr());
    const lines = first.stdout().trim().split('\n');
    t.matchOnlyStrict(
      lines,
      [
        /^[A-Za-z0-9_-]{22} flow\.created .*"name":"One"/,
        /^[A-Za-z0-9_-]{22} flow\.created .*"name":"Two"/,
      ],
      'the first run printed One and Two, and stopped after two',
    );
    // Stopped after two: the next run picks up after the second, with nothing lost or repeated.
    const second = runExample(t, 'examples/follow-events.ts', ['--types', 'flow.created'], env);
    t.equal(await second.exited, 0, second.stderr());
    t.matchOnlyStrict(
      second.stdout().trim().split('\n'),
      [/"name":"Three"/, /"name":"Four"/],
      'the second run printed Three and Four, nothing lost or repeated',
    );
  },
);
