/**
 * `flowplan`: the operator command. Works whether or not the server runs, on the same database;
 * with --json prints one JSON object and nothing else on stdout. Which database it uses goes to
 * stderr; usage errors exit 2, failures 1.
 */
import type { Config } from '../platform/config.ts';
import type { Database } from '../storage/db.ts';
import { UsageError } from './args.js';
import { prepare, usageFailure } from './dispatch.js';
import type { Where } from './database.ts';

type Env = Record<string, string | undefined>;

const out = (text: string) => process.stdout.write(`${text}\n`);
const err = (text: string) => process.stderr.write(`${text}\n`);

async function main(argv: string[], env: Env): Promise<number> {
  const prepared = prepare(argv);
  if (typeof prepared === 'number') return prepared;
  const { command, options } = prepared;
  const json = options.json === true;
  // Loaded only for a command that runs, and then only its own module: help and usage errors
  // need none of them (dispatch.js answers those), and the settings' schema and the Postgres
  // driver are most of what a command loads.
  const [implementation, { escapeControls }] = await Promise.all([
    (await import('./implementations.ts')).implementationOf(command.name),
    import('./terminal.ts'),
  ]);
  let input: unknown;
  try {
    input = await implementation.input(options);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return usageFailure(error, command.name);
  }
  const [{ loadConfig }, { DomainError }, { migrate }, { DatabaseRefused, describe, openFor }] =
    await Promise.all([
      import('../platform/config.ts'),
      import('../platform/errors.ts'),
      import('../storage/migrate.ts'),
      import('./database.ts'),
    ]);
  const fail = (code: string, message: string) => {
    err(`flowplan: ${message}`);
    if (json) out(JSON.stringify({ error: { code, message } }));
    return 1;
  };
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    return fail('INVALID_SETTING', (error as Error).message);
  }
  const where: Where = { config, dataDirSet: Boolean(env.FLOWPLAN_DATA_DIR), cwd: process.cwd() };
  err(`flowplan: ${describe(where)}`);
  let database: Database;
  try {
    database = await openFor(where, command.createsDatabase === true, (line) =>
      err(`flowplan: ${line}`),
    );
  } catch (error) {
    return fail(
      error instanceof DatabaseRefused ? error.code : 'INTERNAL',
      (error as Error).message,
    );
  }
  try {
    // An existing flowplan schema is brought up to date first, as the server does at start.
    if (!command.createsDatabase) await migrate(database.sql);
    const { result, text } = await implementation.run(database.sql, input);
    // Tables escape their cells; a JSON answer's text is escaped as a whole (still the same JSON).
    out(json ? escapeControls(JSON.stringify(result)) : text);
    return 0;
  } catch (error) {
    return fail(error instanceof DomainError ? error.code : 'INTERNAL', (error as Error).message);
  } finally {
    await database.close();
  }
}

process.exit(await main(process.argv.slice(2), process.env));
