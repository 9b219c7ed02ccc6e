/**
 * The reference renders in docs/img (shown in README): a 10-, 100- and 1,000-task flow as the
 * PNG export and as the PDF's first pages, drawn by the export code itself (pages through
 * poppler's pdftoppm). Run after changing how diagrams look: `node --import tsx scripts/reference-renders.ts`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { planPdf, type PlanDocument } from '../src/services/exports/pdf.ts';
import { diagramPng } from '../src/services/exports/png.ts';
import { TEMPLATES } from '../src/services/templates/catalogue.ts';
import { plan, reportOf } from '../bench/export-flows.ts';

const OUT = path.resolve(import.meta.dirname, '..', 'docs', 'img');
const scratch = mkdtempSync(path.join(tmpdir(), 'renders-'));

/** The software-release template's first ten steps, the first two done and the third under way. */
function release(): PlanDocument {
  const document = plan(10);
  const steps = TEMPLATES.find((t) => t.id === 'tpl_software-release')!.tasks.slice(0, 10);
  const status = (i: number) =>
    (i < 1 ? 'done' : i < 2 ? 'in_progress' : i < 4 ? 'ready' : 'blocked') as
      'done' | 'in_progress' | 'ready' | 'blocked';
  const tasks = steps.map((step, i) => ({
    ...document.model.tasks[i]!,
    name: step.name,
    estimateHours: step.estimateHours,
    dependsOn: [...step.after],
    status: status(i),
    critical: [0, 2, 5, 8].includes(i),
  }));
  const model = { ...document.model, flowName: 'Release 4.2', tasks };
  return {
    ...document,
    model,
    report: reportOf(model),
    rows: tasks.map((task, i) => ({
      ...document.rows[i]!,
      name: task.name,
      status: task.status,
      critical: task.critical,
    })),
  };
}

for (const [name, document, pages] of [
  ['flow-10', release(), 1],
  ['flow-100', plan(100), 2],
  ['flow-1000', plan(1000), 2],
] as const) {
  const pdf = path.join(scratch, `${name}.pdf`);
  writeFileSync(pdf, await planPdf(document));
  execFileSync('pdftoppm', [
    '-png',
    '-r',
    '60',
    '-f',
    '1',
    '-l',
    String(pages),
    pdf,
    path.join(OUT, `${name}-pdf`),
  ]);
  // The PNG of the smallest only: a 100-task one is megabytes, too much for the repository.
  if (name === 'flow-10')
    writeFileSync(path.join(OUT, `${name}.png`), await diagramPng(document.model));
}
