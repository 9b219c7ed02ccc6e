/**
 * Names holding control characters, stored before input refused them (issue 29, item 2; a
 * bidirectional override, issue 51, item 5): every rendering stays well-formed and legible. XML 1.0 forbids U+0000–U+001F but tab, LF
 * and CR even as character references, so one in a name made the public SVG and the PNG
 * fail (502) and the brainstorm SVG unreadable. The names are written straight into
 * Postgres, as old data would be; a second process on the same database draws them from there.
 */
import t from 'tap';
import { startApp } from '../../../src/compose.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { request, item } from '../../helpers/server.ts';
import { decodePdf, decodePng, parseXml } from '../../services/exports/decode.ts';
import { pathOf, publicPaths } from './helpers.ts';
import type { Brainstorm, BrainstormSummary, FlowSummary } from '../../helpers/wire.ts';

/** Every C0 control Postgres text can hold (not NUL), and XML's two non-characters. */
const CONTROLS =
  Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join('') + '\uFFFE\uFFFF';
/** What XML 1.0 allows of them: tab, LF and CR. */
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

t.test(
  'control characters in stored names: every SVG parses as XML, PNG and PDF draw, a newline stays on its line',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, {
      name: 'Plan',
      tasks: [
        { name: 'Design', estimateHours: 4 },
        { name: 'Build', after: [0] },
        { name: 'Ship', after: [1] },
      ],
    });
    const flowPath = pathOf(
      (await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${flow.id}/publish`)).publicUrl,
    );
    const board = (
      await s.api<Brainstorm>('POST', '/v1/brainstorms', {
        token: s.adminKey,
        body: { name: 'Board', ideas: [{ title: 'Root' }, { title: 'Leaf', parent: 0 }] },
      })
    ).body;
    const boardPath = pathOf(
      (await ok<BrainstormSummary>(t, s, 'POST', `/v1/brainstorms/${board.id}/publish`)).publicUrl,
    );

    // With a bidirectional override too (issue 51, item 5): it would show the rest reversed.
    const flowName = 'Launch\nsecond\u202E line\u0007';
    const taskName = `Design${CONTROLS}done`;
    await s.sql`update flows set name = ${flowName} where id = ${flow.id}`;
    await s.sql`update tasks set name = ${taskName} where id = ${item(flow.tasks).id}`;
    await s.sql`update brainstorms set name = ${`Board${CONTROLS}`}, version = version + 1 where id = ${board.id}`;
    await s.sql`update ideas set title = ${`Root${CONTROLS}idea`} where id = ${item(board.ideas).id}`;

    // A second process has nothing cached: it reads the names as stored.
    const second = await startApp(
      loadConfig(
        { LOG_LEVEL: 'silent' },
        {
          port: 0,
          databaseUrl: s.databaseUrl,
          rateLimitPerMinute: 1_000_000,
          rateLimitBurst: 1_000_000,
        },
      ),
    );
    t.teardown(() => second.close());
    for (const path of publicPaths(flowPath, boardPath)) {
      const res = await request<{ name: string }>(second.url, 'GET', path);
      t.equal(res.status, 200, `${path} answers 200`);
      if (path.endsWith('.json')) {
        t.ok(
          [flowName, `Board${CONTROLS}`].includes(res.body.name),
          'the JSON keeps the stored name exactly',
        );
        continue;
      }
      t.notMatch(res.text, FORBIDDEN, `${path}: no character XML forbids`);
      if (path === flowPath)
        t.match(
          res.text,
          '<title>Launch second line · flowplan</title>',
          'the page title on one line, in the order it reads',
        );
      if (path.endsWith('.svg')) {
        const texts = parseXml(res.text).map((x) => x.text);
        t.ok(
          texts.some((text) => /^Design\b/.test(text)) ||
            texts.some((text) => /^Root\b/.test(text)),
          `${path} parses as XML and shows the name`,
        );
        if (path.includes('/flows/'))
          t.ok(
            texts.includes('Launch second line'),
            'the flow name on one line, the newline a space',
          );
      }
    }

    const exported = async (format: 'png' | 'pdf') => {
      const res = await fetch(`${second.url}/v1/flows/${flow.id}/exports`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ format }),
      });
      t.equal(res.status, 200, `${format} export answers 200`);
      return Buffer.from(await res.arrayBuffer());
    };
    const png = decodePng(await exported('png'));
    t.ok(png.colours > 10, `the PNG decodes and is drawn (${png.width}×${png.height})`);
    const pdf = await decodePdf(await exported('pdf'));
    t.notMatch(pdf.text, FORBIDDEN, 'no control character in the PDF text');
    t.match(pdf.text, 'Design', 'the task is in the PDF');
    // The name is one line wherever it is drawn: nothing of it on a line of its own below.
    const alone = pdf.pageItems.flat().filter((item) => item.str.trim().startsWith('second line'));
    t.same(alone, [], 'no line starts with the text after the newline');
    t.ok(
      pdf.pageItems[0]!.some((item) => item.str.includes('Launch second line')),
      'the title reads "Launch second line"',
    );
  },
);
