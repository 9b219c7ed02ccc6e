/**
 * The statement check of `npm test` (issue 36): the run's Postgres keeps every distinct
 * statement in pg_stat_statements; after the tests, each is parsed (routable.ts) and one that
 * touches a distributed table (sql/distribution.json) without pinning it to a workspace fails
 * the run, unless test/routing/unroutable.json names it (by fingerprint) with the reason.
 */
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { listMigrations } from '../../src/storage/migrate.ts';
import { checkStatement, loadParser, statementFingerprints } from './routable.ts';

/** Server settings that make the run's cluster keep its statements. */
export const STATEMENT_STATS = {
  shared_preload_libraries: 'pg_stat_statements',
  'pg_stat_statements.max': '20000',
  'pg_stat_statements.track': 'top',
  'pg_stat_statements.track_utility': 'off',
};

export const DISTRIBUTION_FILE = 'sql/distribution.json';
export const ALLOW_FILE = 'test/routing/unroutable.json';

export interface Distribution {
  distributed: { table: string; why: string }[];
  reference: { table: string; why: string }[];
  coordinator: { table: string; why: string }[];
}

export interface Allowed {
  fingerprint: string;
  statement: string;
  reason: string;
}

export function readDistribution(file = DISTRIBUTION_FILE): Distribution {
  return JSON.parse(readFileSync(file, 'utf8')) as Distribution;
}

export function readAllowList(file = ALLOW_FILE): Allowed[] {
  return JSON.parse(readFileSync(file, 'utf8')) as Allowed[];
}

export interface Finding {
  statement: string;
  fingerprint: string;
  unpinned: string[];
}

/** The statements of `texts` not routable by workspace and not allowed; and those that did not parse. */
export async function unroutable(
  texts: readonly string[],
  distributed: ReadonlySet<string>,
  allowed: ReadonlySet<string>,
): Promise<{ findings: Finding[]; unparsed: string[]; seen: Set<string> }> {
  await loadParser();
  // A migration's statements run once, on the one database an installation has before it
  // moves to a cluster (docs/scale.md): they are not the app's, and tests that migrate a
  // database run them.
  const migrations = new Set(
    listMigrations().flatMap((migration) => statementFingerprints(migration.text)),
  );
  const findings = new Map<string, Finding>();
  const unparsed: string[] = [];
  const seen = new Set<string>();
  for (const statement of texts) {
    let verdict;
    try {
      verdict = checkStatement(statement, distributed);
    } catch {
      unparsed.push(statement);
      continue;
    }
    if (verdict.unpinned.length === 0 || migrations.has(verdict.fingerprint)) continue;
    seen.add(verdict.fingerprint);
    if (allowed.has(verdict.fingerprint)) continue;
    findings.set(verdict.fingerprint, { statement, ...verdict });
  }
  return { findings: [...findings.values()], unparsed, seen };
}

/** Forgets the statements seen so far (the template's migrations, before the tests). */
export async function resetStatements(adminUrl: string): Promise<boolean> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin`create extension if not exists pg_stat_statements`;
    await admin`select pg_stat_statements_reset()`;
    return true;
  } catch {
    return false;
  } finally {
    await admin.end();
  }
}

/**
 * Checks every statement the run's Postgres saw; returns the run's status. `whole`: the whole
 * suite ran, so an allow-list entry no statement needed is reported as stale.
 */
export async function checkRunStatements(adminUrl: string, whole: boolean): Promise<number> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  let texts: string[];
  let evicted: number;
  try {
    const rows = await admin<{ query: string }[]>`select distinct query from pg_stat_statements`;
    texts = rows.map((row) => row.query);
    const [info] = await admin<{ dealloc: string }[]>`select dealloc from pg_stat_statements_info`;
    evicted = Number(info?.dealloc ?? 0);
  } finally {
    await admin.end();
  }
  const distribution = readDistribution();
  const allowList = readAllowList();
  const { findings, unparsed, seen } = await unroutable(
    texts,
    new Set(distribution.distributed.map((entry) => entry.table)),
    new Set(allowList.map((entry) => entry.fingerprint)),
  );
  console.log(
    `\nStatements routable by workspace (${DISTRIBUTION_FILE}): ${texts.length} distinct statements checked, ` +
      `${findings.length} not routable, ${allowList.length} allowed (${ALLOW_FILE})`,
  );
  let failed = false;
  if (evicted > 0) {
    console.log(
      `  pg_stat_statements dropped statements ${evicted} times: raise pg_stat_statements.max`,
    );
    failed = true;
  }
  for (const finding of findings) {
    console.log(
      `  not routable (${finding.unpinned.join(', ')} without workspace_id), fingerprint ${finding.fingerprint}:\n` +
        `    ${finding.statement.replace(/\s+/g, ' ').slice(0, 400)}`,
    );
    failed = true;
  }
  if (unparsed.length > 0)
    console.log(`  ${unparsed.length} statements did not parse (not checked)`);
  if (whole) {
    for (const entry of allowList) {
      if (!seen.has(entry.fingerprint))
        console.log(
          `  allowed but not run: ${entry.fingerprint} (${entry.statement.slice(0, 80)})`,
        );
    }
  }
  return failed ? 1 : 0;
}
