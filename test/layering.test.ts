/**
 * The layering rules, checked over every import in src/ so they stay kept:
 * route modules (`*.routes.ts`) call services and never `src/store` (a type-only import
 * is erased at build and calls nothing, so it is allowed); `src/store` imports no schema
 * module; ids come from the neutral `src/platform/ids.ts`, not from the module of secrets.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';

const SRC = path.resolve('src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

interface Import {
  from: string;
  /** Resolved path relative to src/ (null for packages and node: modules). */
  target: string | null;
  typeOnly: boolean;
  names: string[];
}

/** Every static import and re-export of a file, with whether it is type-only. */
function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const found: Import[] = [];
  for (const statement of source.statements) {
    if (!(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) || !statement.moduleSpecifier) continue;
    const specifier = (statement.moduleSpecifier as ts.StringLiteral).text;
    let typeOnly = false;
    const names: string[] = [];
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const bindings = clause?.namedBindings;
      const named = bindings && ts.isNamedImports(bindings) ? bindings.elements : [];
      for (const element of named) names.push((element.propertyName ?? element.name).text);
      typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && named.length > 0 && named.every((e) => e.isTypeOnly)));
    } else {
      typeOnly = statement.isTypeOnly;
    }
    const target = specifier.startsWith('.') ? path.relative(SRC, path.resolve(path.dirname(file), specifier)) : null;
    found.push({ from: specifier, target, typeOnly, names });
  }
  return found;
}

const files = sourceFiles(SRC).map((file) => ({ file: path.relative(SRC, file), imports: importsOf(file) }));

t.test('the import graph was read', async (t) => {
  t.ok(files.length > 100, `${files.length} modules`);
  const routes = files.filter((f) => f.file.endsWith('.routes.ts'));
  t.ok(routes.length >= 10, `${routes.length} route modules`);
  t.ok(files.some((f) => f.imports.some((i) => i.target?.startsWith('store/'))), 'store imports are seen');
});

t.test('route modules call services, never src/store', async (t) => {
  const violations = files
    .filter((f) => f.file.endsWith('.routes.ts'))
    .flatMap((f) => f.imports.filter((i) => i.target?.startsWith('store/') && !i.typeOnly).map((i) => `${f.file} → ${i.from}`));
  t.strictSame(violations, []);
});

t.test('src/store imports no schema module', async (t) => {
  const violations = files
    .filter((f) => f.file.startsWith('store/'))
    .flatMap((f) => f.imports.filter((i) => i.target?.startsWith('schemas/')).map((i) => `${f.file} → ${i.from}`));
  t.strictSame(violations, []);
});

t.test('ids come from src/platform/ids.ts', async (t) => {
  const violations = files.flatMap((f) =>
    f.imports.filter((i) => i.names.includes('newId') && i.target !== 'ids.ts').map((i) => `${f.file} → ${i.from}`),
  );
  t.strictSame(violations, []);
  t.notMatch(readFileSync(path.join(SRC, 'auth/secrets.ts'), 'utf8'), /export function newId/, 'the secrets module makes no ids');
});
