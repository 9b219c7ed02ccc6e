/**
 * Issue 35, item 7: every folder under src/ and workers/ has a README.md that scans: a short
 * opening paragraph, then one bullet per entry of the folder, "- `name` …" for a file and
 * "- `name/` …" for a subfolder (README.md itself aside). A paragraph could leave files out
 * unnoticed; a missing bullet fails here, and so does a bullet that names a `*.ts` file the
 * folder does not hold (renamed or deleted since), so the list stays true both ways.
 *
 * A backticked name with a slash in a bullet is a reference elsewhere: it must exist relative
 * to the folder, to src/ or to the repository's root.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';

const ROOTS = ['src', 'workers'];

function folders(dir: string): string[] {
  const below = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => folders(path.posix.join(dir, e.name)));
  return [dir, ...below];
}

/** Each bullet of a README: a line starting "- " and the indented lines that continue it. */
function bullets(readme: string): string[] {
  const found: string[] = [];
  for (const line of readme.split('\n')) {
    if (line.startsWith('- ')) found.push(line);
    else if (found.length > 0 && /^\s+\S/.test(line) && !line.trimStart().startsWith('- '))
      found[found.length - 1] += ` ${line.trim()}`;
    else if (line.trim() === '' || !/^\s/.test(line)) found.push('');
  }
  return found.filter((b) => b !== '');
}

for (const dir of ROOTS.flatMap(folders)) {
  const entries = readdirSync(dir).filter((name) => name !== 'README.md');
  if (entries.length === 0) continue;
  t.test(dir, async (t) => {
    const readmePath = path.posix.join(dir, 'README.md');
    if (!existsSync(readmePath)) {
      t.fail(`${readmePath} is missing`);
      return;
    }
    const readme = readFileSync(readmePath, 'utf8');
    const lines = readme.split('\n');
    for (const name of entries) {
      const isDir = statSync(path.join(dir, name)).isDirectory();
      const start = isDir ? `- \`${name}/` : `- \`${name}\``;
      const has = lines.some((l) => l.startsWith(start));
      t.ok(has, `a bullet for ${isDir ? `${name}/` : name}`);
    }
    for (const bullet of bullets(readme)) {
      for (const match of bullet.matchAll(/`([^`\s]+\.ts)`/g)) {
        const named = match[1] ?? '';
        const ok = named.includes('/')
          ? [dir, 'src', '.'].some((base) => existsSync(path.join(base, named)))
          : entries.includes(named);
        t.ok(ok, `${named} (named in a bullet) exists`);
      }
    }
  });
}
