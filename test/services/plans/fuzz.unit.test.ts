/**
 * Issue 54, item 5: the readers on what strangers send. Any document, from a well-formed export
 * to one cut short, spliced with DTDs, entities, stray quotes and control bytes, or plain random
 * bytes, is either a plan a flow can hold (links within it and never to the task itself, names one
 * line of at most 500 characters, lags within ±500 working days, a calendar's holidays ascending)
 * or a VALIDATION_FAILED whose every problem names its line, never any other exception.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { DomainError } from '../../../src/platform/errors.ts';
import { readCsv } from '../../../src/services/plans/csv-reader.ts';
import { readMspdi } from '../../../src/services/plans/mspdi-reader.ts';
import type { ImportedPlan } from '../../../src/services/plans/plan.ts';
import { csvDocumentArb, mspdiDocumentArb } from './arbitraries.ts';

function holdable(plan: ImportedPlan): void {
  plan.tasks.forEach((task, i) => {
    assert.ok(task.name.length > 0 && Array.from(task.name).length <= 500);
    assert.ok(!/[\u0000-\u001F\u007F]/.test(task.name), 'one line');
    assert.equal(new Set(task.links.map((l) => l.task)).size, task.links.length, 'one link a pair');
    for (const link of task.links) {
      assert.ok(link.task >= 0 && link.task < plan.tasks.length && link.task !== i);
      assert.ok(Number.isInteger(link.lagDays) && Math.abs(link.lagDays) <= 500);
    }
  });
  const holidays = plan.calendar?.holidays.map((h) => h.date) ?? [];
  assert.deepEqual(holidays, [...new Set(holidays)].sort());
}

function readOrRefuse(read: () => ImportedPlan): void {
  try {
    holdable(read());
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    assert.equal(error.code, 'VALIDATION_FAILED');
    const errors = error.details?.errors as { line: number; message: string }[];
    assert.ok(errors.length > 0);
    for (const e of errors)
      assert.ok(
        Number.isInteger(e.line) && e.line >= 1 && e.message.startsWith(`line ${e.line}: `),
      );
  }
}

const readers = [
  ['MSPDI', readMspdi, mspdiDocumentArb],
  ['CSV', readCsv, csvDocumentArb],
] as const;

for (const [what, read, documents] of readers)
  t.test(`${what}: a plan a flow holds, or VALIDATION_FAILED naming lines`, async (t) => {
    fc.assert(
      fc.property(documents, (text) => readOrRefuse(() => read(Buffer.from(text, 'utf8')))),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => readOrRefuse(() => read(bytes))),
      { numRuns: 300 },
    );
    t.pass('600 documents read or refused');
  });
