/**
 * `npm install` warns EBADENGINE for every package whose `engines.node` leaves out the Node it
 * runs on. What flowplan runs on (package.json `engines`, `>=20.12`: README's Runtime table,
 * 20.12+, 22.12+ and 24) every package of a production install (`npm ci --omit=dev`) must take.
 * The development tools (tap, eslint, typescript-eslint, c8) ask for more, as README says: Node
 * 20.19+, 22.13+ or 24 to develop; every package of the lock must take those. Each line's first
 * release is checked, and a recent one. The ranges are read by a small matcher of npm's range
 * syntax below (the lock holds no other forms: it refuses one it cannot read), checked first.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';

/** Node versions flowplan runs on: each supported line's first release, and a recent one. */
const RUNS_ON = ['20.12.0', '20.20.2', '22.12.0', '22.23.3', '24.0.0', '24.21.0'];
/** Node versions it is developed on (`npm install` with the dev dependencies). */
const DEVELOPED_ON = ['20.19.0', '20.20.2', '22.13.0', '22.23.3', '24.0.0', '24.21.0'];

type Version = [number, number, number];

const version = (text: string): Version => {
  const [major = 0, minor = 0, patch = 0] = text.split('.').map(Number);
  return [major, minor, patch];
};
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** Whether `node` is in the range `range` (`^20.19.0 || >=22`, `>= 18`, `20 || >=22`, `^18.17.0 || >=20.5.0`, `*`). */
export function satisfies(node: string, range: string): boolean {
  const v = version(node);
  return range.split('||').some((alternative) => {
    const comparators = alternative
      .trim()
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1')
      .split(/\s+/);
    return comparators.every((comparator) => {
      if (comparator === '*' || comparator === '') return true;
      const match = /^(>=|<=|>|<|=|\^|~)?v?(\d+)(?:\.(\d+|[x*]))?(?:\.(\d+|[x*]))?$/.exec(
        comparator,
      );
      if (!match) throw new Error(`cannot read the range ${JSON.stringify(range)}`);
      const [, op = '', major, minor, patch] = match;
      const parts = [major, minor, patch].filter((p) => p !== undefined && p !== 'x').length;
      const floor = version(
        `${major}.${minor === 'x' ? 0 : (minor ?? 0)}.${patch === 'x' ? 0 : (patch ?? 0)}`,
      );
      const above = compare(v, floor);
      switch (op) {
        case '>=':
          return above >= 0;
        case '>':
          return above > 0;
        case '<':
          return above < 0;
        case '<=':
          return above <= 0;
        case '^':
          return above >= 0 && v[0] === floor[0];
        case '~':
          return above >= 0 && v[0] === floor[0] && (parts < 2 || v[1] === floor[1]);
        default:
          // `20`, `20.12`, `=20.12.0`: the versions that start so.
          return v.slice(0, parts).every((part, i) => part === floor[i]);
      }
    });
  });
}

t.test('the range matcher', async (t) => {
  t.ok(satisfies('20.19.0', '^20.19.0 || ^22.13.0 || >=24'));
  t.notOk(satisfies('20.12.0', '^20.19.0 || ^22.13.0 || >=24'));
  t.notOk(satisfies('22.12.0', '^20.19.0 || ^22.13.0 || >=24'));
  t.ok(satisfies('24.0.0', '^20.19.0 || ^22.13.0 || >=24'));
  t.notOk(satisfies('20.20.2', '>=22'));
  t.ok(satisfies('20.12.0', '>= 18'));
  t.ok(satisfies('21.0.0', '20 || >=21'));
  t.notOk(satisfies('21.0.0', '20 || >=22'));
  t.ok(satisfies('20.12.0', '^20.12||^22.13||>=24.0'));
  t.ok(satisfies('22.1.0', '~22'));
  t.notOk(satisfies('22.1.0', '~22.0.0'));
  t.ok(satisfies('20.12.0', '>=14.17.0 <15 || >=16'));
  t.notOk(satisfies('14.16.0', '>=14.17.0 <15 || >=16'));
  t.ok(satisfies('22.12.0', '*'));
  t.ok(satisfies('20.12.0', '20.x'));
  t.ok(satisfies('20.12.0', '10.* || >= 12.*'));
  t.notOk(satisfies('11.0.0', '10.* || >= 12.*'));
  t.ok(satisfies('20.12.0', '<=20.12.0'));
  t.notOk(satisfies('20.12.0', '>20.12.0'));
  t.throws(() => satisfies('20.12.0', '>=20.12.0-rc.1'), /cannot read the range/);
});

t.test('no package the lock installs refuses a supported Node', async (t) => {
  const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
    packages: Record<
      string,
      { version?: string; dev?: boolean; engines?: { node?: string } | string[] }
    >;
  };
  const refusing: string[] = [];
  let production = 0;
  let development = 0;
  for (const [where, entry] of Object.entries(lock.packages)) {
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (!range) continue;
    if (entry.dev) development++;
    else production++;
    const left = (entry.dev ? DEVELOPED_ON : RUNS_ON).filter((node) => !satisfies(node, range));
    if (left.length > 0)
      refusing.push(
        `${where || 'package.json'}@${entry.version ?? ''} (${range}${entry.dev ? ', dev' : ''}) leaves out ${left.join(', ')}`,
      );
  }
  t.ok(production > 30 && development > 100, `${production} + ${development} packages name a Node`);
  t.strictSame(refusing, [], 'no EBADENGINE where flowplan runs, nor where it is developed');
});
