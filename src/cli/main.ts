/**
 * `flowplan`: the operator command (CONTRACT §0). Works whether or not the server runs,
 * on the same database; with --json prints one JSON object and nothing else on stdout.
 */
import { loadConfig } from '../config.ts';
import { ApiError } from '../errors.ts';
import { createClient, createKey, createUser, createWorkspace, deleteClient, setWorkspace } from '../auth/provision.ts';
import { revokeCredential } from '../store/credentials.store.ts';
import { openDatabase, type Sql } from '../store/db.ts';
import { migrate } from '../store/migrate.ts';
import { formatJobsReport, jobsReport } from '../jobs/report.ts';
import { bool, count, email, optional, parse, plan, required, role, scopes, UsageError } from './args.ts';

const USAGE = `usage:
  flowplan migrate
  flowplan workspace create --name N [--plan free|pro] [--seats N] [--json]
  flowplan workspace set --id W [--plan free|pro] [--past-due true|false] [--seats N] [--json]
  flowplan user create --email E --name N --password P [--workspace W --role owner|admin|member|viewer] [--json]
  flowplan key create --workspace W --role admin|member|viewer --scopes "s1 s2 …"|all [--name N] [--json]
  flowplan key revoke --id K [--json]
  flowplan client create --workspace W --role R --scopes …|all [--name N] [--first-party --redirect-uri URI …] [--json]
  flowplan client delete --id C [--json]   (the client and every token it issued, in every workspace, stop working)
  flowplan jobs [--failed N] [--json]   (queues by state, recent failed jobs, the outbox backlog)`;

type Command = (sql: Sql, argv: string[]) => Promise<{ result: Record<string, unknown>; text: string }>;

const COMMANDS: Record<string, Command> = {
  migrate: async (sql, argv) => {
    parse(argv, {});
    const applied = await migrate(sql);
    return { result: { applied }, text: applied.length ? `applied ${applied.join(', ')}` : 'database is up to date' };
  },
  jobs: async (sql, argv) => {
    const o = parse(argv, { failed: { type: 'string' } });
    const report = await jobsReport(sql, count(optional(o, 'failed'), 'failed') ?? 20);
    return { result: report, text: formatJobsReport(report) };
  },
  'workspace create': async (sql, argv) => {
    const o = parse(argv, { name: { type: 'string' }, plan: { type: 'string' }, seats: { type: 'string' } });
    const { id } = await createWorkspace(sql, { name: required(o, 'name'), plan: plan(optional(o, 'plan')), seats: count(optional(o, 'seats'), 'seats') });
    return { result: { id }, text: `workspace ${id}` };
  },
  'workspace set': async (sql, argv) => {
    const o = parse(argv, { id: { type: 'string' }, plan: { type: 'string' }, 'past-due': { type: 'string' }, seats: { type: 'string' } });
    const changes = { plan: plan(optional(o, 'plan')), pastDue: bool(optional(o, 'past-due'), 'past-due'), seats: count(optional(o, 'seats'), 'seats') };
    if (Object.values(changes).every((v) => v === undefined)) throw new UsageError('give at least one of --plan, --past-due, --seats');
    const row = await setWorkspace(sql, required(o, 'id'), changes);
    return { result: { id: row.id, plan: row.plan, pastDue: row.pastDue, seats: row.seats }, text: `workspace ${row.id}: plan ${row.plan}, past due ${row.pastDue}, seats ${row.seats}` };
  },
  'user create': async (sql, argv) => {
    const o = parse(argv, { email: { type: 'string' }, name: { type: 'string' }, password: { type: 'string' }, workspace: { type: 'string' }, role: { type: 'string' } });
    const workspaceId = optional(o, 'workspace');
    const roleName = optional(o, 'role');
    if (roleName && !workspaceId) throw new UsageError('--role goes with --workspace');
    const { id } = await createUser(sql, {
      email: email(required(o, 'email')), name: optional(o, 'name'), password: optional(o, 'password'), workspaceId,
      role: workspaceId ? role(roleName ?? 'member', ['owner', 'admin', 'member', 'viewer'] as const) : undefined,
    });
    return { result: { id }, text: `user ${id}` };
  },
  'key create': async (sql, argv) => {
    const o = parse(argv, { workspace: { type: 'string' }, role: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' } });
    const created = await createKey(sql, { workspaceId: required(o, 'workspace'), role: role(required(o, 'role')), scopes: scopes(required(o, 'scopes')), name: optional(o, 'name') });
    return { result: created, text: `key ${created.id} (shown once, keep it):\n${created.key}` };
  },
  'key revoke': async (sql, argv) => {
    const o = parse(argv, { id: { type: 'string' } });
    const id = required(o, 'id');
    if (!(await revokeCredential(sql, id))) throw new ApiError('NOT_FOUND', `No credential ${id}`);
    return { result: { id, revoked: true }, text: `revoked ${id}` };
  },
  'client create': async (sql, argv) => {
    const o = parse(argv, { workspace: { type: 'string' }, role: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' }, 'first-party': { type: 'boolean' }, 'redirect-uri': { type: 'string', multiple: true } });
    const firstParty = o['first-party'] === true;
    const redirectUris = (o['redirect-uri'] as string[] | undefined) ?? [];
    if (firstParty && redirectUris.length === 0) throw new UsageError('a --first-party client needs at least one --redirect-uri');
    if (!firstParty && redirectUris.length > 0) throw new UsageError('--redirect-uri goes with --first-party');
    for (const uri of redirectUris) if (!URL.canParse(uri)) throw new UsageError(`--redirect-uri is not a URL: ${uri}`);
    const created = await createClient(sql, { workspaceId: required(o, 'workspace'), role: role(required(o, 'role')), scopes: scopes(required(o, 'scopes')), name: optional(o, 'name'), firstParty, redirectUris });
    return { result: created, text: `client ${created.clientId}${created.clientSecret ? `\nsecret (shown once, keep it): ${created.clientSecret}` : ' (public: no secret)'}` };
  },
  'client delete': async (sql, argv) => {
    const o = parse(argv, { id: { type: 'string' } });
    const id = required(o, 'id');
    const { firstParty } = await deleteClient(sql, id);
    return { result: { id, deleted: true }, text: `deleted client ${id}${firstParty ? ' (first-party: its sign-ins in every workspace ended)' : ''}` };
  },
};

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const name = argv[0] === 'migrate' || argv[0] === 'jobs' ? argv[0] : `${argv[0]} ${argv[1]}`;
  const command = COMMANDS[name];
  if (!command || argv[0] === '--help') {
    process.stderr.write(`${argv.length && argv[0] !== '--help' ? `unknown command: ${argv.slice(0, 2).join(' ')}\n` : ''}${USAGE}\n`);
    return argv[0] === '--help' ? 0 : 2;
  }
  const database = await openDatabase(loadConfig());
  try {
    // Every command needs the schema; `migrate` itself reports what it applies.
    if (name !== 'migrate') await migrate(database.sql);
    const { result, text } = await command(database.sql, argv.slice(name.split(' ').length));
    process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${text}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`flowplan: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    const message = error instanceof ApiError ? error.message : (error as Error).message;
    process.stderr.write(`flowplan: ${message}\n`);
    if (json) process.stdout.write(`${JSON.stringify({ error: { code: error instanceof ApiError ? error.code : 'INTERNAL', message } })}\n`);
    return 1;
  } finally {
    await database.close();
  }
}

process.exit(await main(process.argv.slice(2)));
