/**
 * The diagram model and its SVG, as the public views use them: nothing private in the
 * model, user text escaped, accessible markup, the render pool's saturation answer.
 */
import t from 'tap';
import fc from 'fast-check';
import pino from 'pino';
import { diagramModel } from '../../src/services/exports/diagram.ts';
import { layout, tiles } from '../../src/services/exports/layout.ts';
import { RenderService } from '../../src/services/exports/render.service.ts';
import { member, newFlow, ok, startFlowServer } from '../helpers/flows.ts';

const MARK = 'zq7MARKERzq7';

t.test('the model is public-safe: no assignee, description, comment, file or note', async (t) => {
  const s = await startFlowServer(t);
  const person = await member(s, `${MARK}-person`);
  const flow = await newFlow(t, s, {
    name: 'Public plan',
    description: `${MARK}-flow-description`,
    dueDate: '2030-01-31',
    tasks: [
      { name: 'Design', description: `${MARK}-description`, assigneeId: person, estimateHours: 8 },
      { name: 'Build', after: [0], assigneeId: person },
    ],
  });
  const design = flow.tasks[0].id;
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${design}/comments`, { body: `${MARK}-comment` }, 201);
  const upload = await fetch(`${s.url}/v1/flows/${flow.id}/tasks/${design}/attachments?name=${MARK}-file.txt`, {
    method: 'POST', headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'text/plain' }, body: `${MARK}-file-content`,
  });
  t.equal(upload.status, 201, 'file attached');

  const model = diagramModel(await s.app.services.registry.snapshot(s.workspaceId, flow.id));
  const text = JSON.stringify(model);
  t.notMatch(text, MARK, 'no private text in the model');
  t.notMatch(text, person, 'no assignee id');
  t.strictSame(Object.keys(model).sort(), ['dueDate', 'flowId', 'flowName', 'onTrack', 'projectedFinish', 'tasks', 'version']);
  for (const task of model.tasks) t.strictSame(Object.keys(task).sort(), ['critical', 'dependsOn', 'estimateHours', 'id', 'name', 'status']);
  t.strictSame(model.tasks.map((task) => [task.name, task.status, task.estimateHours, task.critical, task.dependsOn]), [
    ['Design', 'ready', 8, true, []],
    ['Build', 'blocked', null, true, [0]],
  ]);
  t.equal(model.dueDate, '2030-01-31');
  t.equal(model.onTrack, true);

  const svg = await s.app.services.render.diagramSvg(model);
  t.notMatch(svg, MARK, 'nor in the SVG');
});

t.test('the SVG escapes names and is accessible', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Plan <b>bold</b>',
    tasks: [{ name: '<script>alert(1)</script>', estimateHours: 3 }, { name: '</svg><img src=x onerror=alert(1)>', after: [0] }, { name: 'Side "quote" & \'apos\'' }],
  });
  const model = diagramModel(await s.app.services.registry.snapshot(s.workspaceId, flow.id));
  const svg = await s.app.services.render.diagramSvg(model);
  t.match(svg, /^<svg [^>]*role="img"/, 'role=img');
  t.match(svg, /aria-label="Dependency diagram of Plan &lt;b&gt;bold&lt;\/b&gt;: 3 tasks\. Critical path: &lt;script&gt;alert\(1\)&lt;\/script&gt;, &lt;\/svg&gt;/);
  t.match(svg, '<title>Dependency diagram of Plan &lt;b&gt;bold&lt;/b&gt;</title>');
  t.notMatch(svg, '<script', 'no script element');
  t.notMatch(svg, '<img', 'no img element');
  t.notMatch(svg, '<b>', 'no markup from names');
  t.equal(svg.match(/<svg/g)?.length, 2, 'only our own svg elements');
  t.equal(svg.match(/<\/svg>/g)?.length, 2);
  t.match(svg, '&lt;script&gt;alert(1)&lt;/script&gt;');
  t.match(svg, 'Side &quot;quote&quot; &amp; &#39;apos&#39;');
  t.match(svg, 'class="fp-diagram"', 'a class for page stylesheets to theme');
  t.match(svg, 'stroke-width="3.5"', 'critical tasks have a thicker border');
  t.match(svg, '>critical</text>', 'and a text label, not colour alone');
  t.match(svg, /Ready · 3 h/);
  t.notMatch(svg, '<style', 'inline use: no style element for a strict CSP');
  t.match(await s.app.services.render.diagramSvg(model, { standalone: true }), '@media (prefers-color-scheme: dark)', 'standalone: dark theme inside');
});

t.test('the render pool refuses past its bound with 503 and Retry-After', async (t) => {
  const render = new RenderService({ threads: 1, timeoutMs: 30_000, maxInFlight: 1, log: pino({ level: 'silent' }) });
  t.teardown(() => render.close());
  const model = { flowId: 'flw_x', flowName: 'Busy', version: 1, dueDate: null, projectedFinish: null, onTrack: null, tasks: [] };
  const first = render.png(model);
  await t.rejects(render.png(model), { code: 'SERVICE_UNAVAILABLE', hints: { retryAfterSeconds: 2 } });
  t.ok((await first).length > 0, 'the render in flight finishes');
  t.ok((await render.png(model)).length > 0, 'and the next one is taken');
});

t.test('layout: every task right of what it waits for, one task per cell, tiles cover every task once', async (t) => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 4 }), (n, seed, fanIn) => {
    let state = seed;
    const random = () => (state = (state * 16807) % 2147483647) / 2147483647;
    // Dependencies point anywhere earlier in a random order, so indexes run both ways.
    const order = Array.from({ length: n }, (_, i) => i).sort(() => random() - 0.5);
    const dependsOn: number[][] = Array.from({ length: n }, () => []);
    order.forEach((task, k) => {
      for (let d = 0; d < fanIn && k > 0; d++) dependsOn[task]!.push(order[Math.floor(random() * k)]!);
      dependsOn[task] = [...new Set(dependsOn[task])];
    });
    const model = {
      flowId: 'flw_p', flowName: 'P', version: 1, dueDate: null, projectedFinish: null, onTrack: null,
      tasks: dependsOn.map((deps, i) => ({ id: `t${i}`, name: `T${i}`, status: 'ready' as const, estimateHours: null, critical: false, dependsOn: deps })),
    };
    const l = layout(model);
    const cells = new Set<string>();
    model.tasks.forEach((task, i) => {
      for (const dep of task.dependsOn) if (!(l.layer[dep]! < l.layer[i]!)) throw new Error(`task ${i} not right of ${dep}`);
      cells.add(`${l.layer[i]},${l.row[i]}`);
      if (l.row[i]! >= l.rows || l.layer[i]! >= l.layers) throw new Error('outside the grid');
    });
    if (cells.size !== n) throw new Error('two tasks share a cell');
    const covered = tiles(model, l, 5, 9).reduce((sum, tile) => sum + model.tasks.filter((_, i) =>
      l.layer[i]! >= tile.layer0 && l.layer[i]! < tile.layer1 && l.row[i]! >= tile.row0 && l.row[i]! < tile.row1).length, 0);
    if (covered !== n) throw new Error(`tiles cover ${covered} of ${n}`);
  }), { numRuns: 200 });
  t.pass('property held');
});
