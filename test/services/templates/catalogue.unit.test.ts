import t from 'tap';
import { TEMPLATES } from '../../../src/services/templates/catalogue.ts';
import type { TemplateDef } from '../../../src/services/templates/catalogue.ts';

const days = (hours: number): number => Math.ceil(hours / 8);

/** Longest chain of durations (in days) through the template, by DP over index order. */
function longestPathDays(def: TemplateDef): number {
  const finish: number[] = [];
  def.tasks.forEach((task, i) => {
    let start = 0;
    for (const dep of task.after) start = Math.max(start, finish[dep] ?? 0);
    finish[i] = start + days(task.estimateHours);
  });
  return Math.max(0, ...finish);
}

t.test('catalogue shape', async (t) => {
  t.ok(TEMPLATES.length >= 8, 'at least 8 templates');
  const categories = new Set(TEMPLATES.map((d) => d.category));
  t.ok(categories.size >= 6, `at least 6 distinct categories (got ${categories.size})`);
  for (const c of categories) t.match(c, /^[a-z]+(-[a-z]+)*$/, `category ${c} is lower-case kebab`);
  const ids = TEMPLATES.map((d) => d.id);
  t.equal(new Set(ids).size, ids.length, 'ids are unique');
  for (const id of ids) t.match(id, /^tpl_[a-z0-9-]+$/, `id ${id} matches pattern`);
});

t.test('catalogue is frozen', async (t) => {
  t.ok(Object.isFrozen(TEMPLATES));
  const first = TEMPLATES[0]!;
  t.ok(Object.isFrozen(first));
  t.ok(Object.isFrozen(first.tasks));
  t.ok(Object.isFrozen(first.tasks[0]));
  t.ok(Object.isFrozen(first.tasks[0]!.after));
});

for (const def of TEMPLATES) {
  t.test(`template ${def.id}`, async (t) => {
    t.ok(def.name.trim().length > 0, 'has a name');
    t.ok(def.description.trim().length > 0, 'has a description');
    t.ok(def.tasks.length >= 8 && def.tasks.length <= 30, `8-30 tasks (got ${def.tasks.length})`);

    const names = def.tasks.map((task) => task.name);
    t.equal(new Set(names).size, names.length, 'task names are unique');

    const dependents = new Array<number>(def.tasks.length).fill(0);
    let roots = 0;
    let merges = 0;
    def.tasks.forEach((task, i) => {
      t.ok(task.name.trim().length > 0, `task ${i} has a name`);
      t.ok(
        Number.isFinite(task.estimateHours) && task.estimateHours > 0,
        `task ${i} estimate is positive`,
      );
      t.equal(new Set(task.after).size, task.after.length, `task ${i} has no duplicate deps`);
      for (const dep of task.after) {
        t.ok(
          Number.isInteger(dep) && dep >= 0 && dep < i,
          `task ${i} dep ${dep} is an earlier index`,
        );
        dependents[dep] = (dependents[dep] ?? 0) + 1;
      }
      if (task.after.length === 0) roots++;
      if (task.after.length >= 2) merges++;
    });
    t.ok(def.tasks[0]!.after.length === 0, 'first task has no dependencies');
    t.ok(merges >= 1, 'at least one merge (task with >= 2 deps)');
    const fanOuts = dependents.filter((n) => n >= 2).length;
    t.ok(roots >= 2 || fanOuts >= 1, 'at least 2 roots or a fan-out');

    const total = def.tasks.reduce((sum, task) => sum + days(task.estimateHours), 0);
    const longest = longestPathDays(def);
    t.ok(longest < total, `critical path ${longest}d shorter than total ${total}d`);
  });
}
