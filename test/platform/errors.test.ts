/**
 * One refusal, one wording: a refusal made in two places comes from one factory in
 * src/platform/errors.ts, so no two `new DomainError(code, 'literal')` in src say the same thing.
 */
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import t from 'tap';
import ts from 'typescript';

t.test('no refusal is worded in two places', async (t) => {
  const files = execFileSync('git', ['ls-files', 'src'], { encoding: 'utf8' })
    .split('\n')
    .filter((file) => file.endsWith('.ts'));
  const sites = new Map<string, string[]>();
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node) && node.expression.getText(source) === 'DomainError') {
        const [code, message] = node.arguments ?? [];
        if (code && message && !ts.isIdentifier(message)) {
          const key = `${code.getText(source)} ${message.getText(source)}`;
          const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
          sites.set(key, [...(sites.get(key) ?? []), `${file}:${line}`]);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  const repeated = [...sites].filter(([, where]) => where.length > 1);
  t.strictSame(repeated, [], 'each repeated refusal belongs in src/platform/errors.ts');
});
