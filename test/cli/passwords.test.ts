/**
 * Operator passwords: `--password-stdin` reads the first line of stdin (so the password is in
 * neither shell history nor `ps`); one floor (src/services/account/password.ts) for the CLI's
 * user create and set-password as for invite sign-up; `user create` on an email that has an
 * account refuses a password (or name) rather than ignoring it.
 */
import { spawn } from 'node:child_process';
import t from 'tap';
import { MIN_PASSWORD } from '../../src/services/account/password.ts';
import { verifyPassword } from '../../src/services/auth/secrets.ts';
import { cli, startTestServer, until } from '../helpers/server.ts';
import { databaseLine } from './output.ts';

t.test('operator passwords', async (t) => {
  const s = await startTestServer(t);
  const db = s.databaseUrl;
  const hashOf = async (email: string) =>
    (
      await s.sql<
        { passwordHash: string }[]
      >`select password_hash from users where lower(email) = ${email}`
    )[0]?.passwordHash;
  const people = async () => (await s.sql`select count(*)::int as n from users`)[0]!.n as number;

  t.test('user create --password-stdin: the first line of stdin is the password', async (t) => {
    const password = 'a passphrase from a pipe';
    const created = await cli(
      db,
      [
        'user',
        'create',
        '--email',
        'pipe@example.com',
        '--name',
        'Pipe',
        '--password-stdin',
        '--json',
      ],
      `${password}\r\nnot this line\n`,
    );
    t.equal(created.code, 0, created.stderr);
    t.equal(created.stderr, databaseLine(db), 'stderr names the database only');
    t.match(JSON.parse(created.stdout), { id: /^usr_/ });
    t.ok(
      await verifyPassword(password, (await hashOf('pipe@example.com'))!),
      'the line, without its CR LF, is the password',
    );

    const next = 'another piped passphrase';
    const set = await cli(
      db,
      ['user', 'set-password', '--email', 'pipe@example.com', '--password-stdin', '--json'],
      next,
    ); // no newline at the end
    t.equal(set.code, 0, set.stderr);
    t.ok(
      await verifyPassword(next, (await hashOf('pipe@example.com'))!),
      'set-password reads it the same way',
    );
    t.notMatch(set.stdout + set.stderr, next, 'never printed');
  });

  t.test(
    'one floor: shorter than the invitation form allows is refused everywhere, changing nothing',
    async (t) => {
      const short = 'x'.repeat(MIN_PASSWORD - 1);
      const before = await people();
      const kept = await hashOf('pipe@example.com');
      for (const [args, stdin] of [
        [
          [
            'user',
            'create',
            '--email',
            'short@example.com',
            '--name',
            'Short',
            '--password',
            short,
          ],
          '',
        ],
        [
          ['user', 'create', '--email', 'short@example.com', '--name', 'Short', '--password-stdin'],
          `${short}\n`,
        ],
        [['user', 'create', '--email', 'one@example.com', '--name', 'One', '--password', 'p'], ''],
        [['user', 'set-password', '--email', 'pipe@example.com', '--password', short], ''],
        [['user', 'set-password', '--email', 'pipe@example.com', '--password-stdin'], `${short}\n`],
      ] as const) {
        const result = await cli(db, [...args], stdin);
        t.equal(result.code, 2, `${args.join(' ')}: exit 2`);
        t.match(
          result.stderr,
          `A password needs at least ${MIN_PASSWORD} characters`,
          'says the floor',
        );
        t.equal(result.stdout, '');
      }
      t.equal(await people(), before, 'no account created');
      t.equal(await hashOf('pipe@example.com'), kept, 'no password changed');

      const exactly = await cli(
        db,
        [
          'user',
          'create',
          '--email',
          'ten@example.com',
          '--name',
          'Ten',
          '--password-stdin',
          '--json',
        ],
        `${'y'.repeat(MIN_PASSWORD)}\n`,
      );
      t.equal(exactly.code, 0, `${MIN_PASSWORD} characters are enough ${exactly.stderr}`);
    },
  );

  t.test(
    'user create on an existing account with a password: refused, pointing to set-password; nothing changes',
    async (t) => {
      const kept = await hashOf('pipe@example.com');
      const { id: other } = JSON.parse(
        (await cli(db, ['workspace', 'create', '--name', 'Elsewhere', '--json'])).stdout,
      ) as { id: string };
      for (const args of [
        ['--password', 'a different long password'],
        ['--name', 'Someone Else', '--password', 'a different long password'],
        ['--name', 'Someone Else'],
      ]) {
        const refused = await cli(db, [
          'user',
          'create',
          '--email',
          'PIPE@example.com',
          ...args,
          '--workspace',
          other,
          '--json',
        ]);
        t.equal(refused.code, 1, `${args.join(' ')}: exit 1`);
        t.match(JSON.parse(refused.stdout), { error: { code: 'VALIDATION_FAILED' } });
        t.match(
          refused.stderr,
          /^flowplan: pipe@example\.com has an account already \(usr_[\w-]+\): nothing was changed.*flowplan user set-password --email pipe@example\.com --password-stdin/m,
        );
      }
      t.equal(await hashOf('pipe@example.com'), kept, 'the password is unchanged');
      const [member] =
        await s.sql`select 1 from memberships m join users u on u.id = m.user_id where u.email = 'pipe@example.com' and m.workspace_id = ${other}`;
      t.notOk(member, 'not added to the workspace either');
      const added = await cli(db, [
        'user',
        'create',
        '--email',
        'pipe@example.com',
        '--workspace',
        other,
        '--json',
      ]);
      t.equal(added.code, 0, 'without a password or name it adds the account to the workspace');
    },
  );

  t.test('--password-stdin on a terminal: asked twice, never echoed', async (t) => {
    const typed = 'typed at a terminal';
    const ok = await onTerminal(
      db,
      ['user', 'set-password', '--email', 'pipe@example.com', '--password-stdin', '--json'],
      [typed, typed],
    );
    t.equal(ok.code, 0, ok.output);
    t.match(ok.output, /Password: \r?\n.*Password again: /s, 'the prompts, on the terminal');
    t.notMatch(ok.output, typed, 'what was typed is not shown');
    t.ok(
      await verifyPassword(typed, (await hashOf('pipe@example.com'))!),
      'the password typed is set',
    );

    const differ = await onTerminal(
      db,
      ['user', 'set-password', '--email', 'pipe@example.com', '--password-stdin'],
      ['one long password', 'another long one'],
    );
    t.equal(differ.code, 2);
    t.match(differ.output, /the two passwords typed differ: nothing was changed/);
    t.ok(await verifyPassword(typed, (await hashOf('pipe@example.com'))!), 'unchanged');
  });

  t.test('bad password options: exit 2 before any database is opened', async (t) => {
    for (const [args, stdin, why] of [
      [['--password', 'a long enough one', '--password-stdin'], 'a long enough one\n', /not both/],
      [['--password-stdin'], '', /--password-stdin read no password/],
      [['--password-stdin'], '\nsecond line\n', /--password-stdin read no password/],
    ] as const) {
      const result = await cli(
        db,
        ['user', 'set-password', '--email', 'pipe@example.com', ...args],
        stdin,
      );
      t.equal(result.code, 2, args.join(' '));
      t.match(result.stderr, why);
      t.notMatch(result.stderr, /database/, 'no database named: none was opened');
    }
    const missing = await cli(db, ['user', 'set-password', '--email', 'pipe@example.com']);
    t.equal(missing.code, 2);
    t.match(missing.stderr, /--password-stdin \(or --password\) is required/);
  });
});

/** Runs the CLI on a terminal of its own (util-linux `script`), typing each answer once its prompt shows. */
async function onTerminal(
  databaseUrl: string,
  args: string[],
  answers: string[],
): Promise<{ code: number | null; output: string }> {
  const child = spawn(
    'script',
    ['-qec', [process.execPath, 'bin/flowplan.js', ...args].join(' '), '/dev/null'],
    {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const stuck = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => (clearTimeout(stuck), resolve(code))),
  );
  for (const [index, answer] of answers.entries()) {
    await until(
      async () => output.match(/Password(?: again)?: /g)?.length ?? 0,
      (prompts) => prompts > index,
      20_000,
    );
    child.stdin.write(`${answer}\r`);
  }
  const code = await exited;
  return { code, output };
}
