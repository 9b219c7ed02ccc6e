/**
 * Issue 54, item 5: hostile XML. No DTD, no external entity and no entity expansion is ever
 * processed: an XXE naming a local file, a billion-laughs document, a DOCTYPE of any kind, a 12 MB
 * body, a wrong namespace, HTML, truncated XML, each a VALIDATION_FAILED naming its line (the
 * body by its size: PAYLOAD_TOO_LARGE before a byte is decoded), and no file is opened while
 * reading. What a document may hold (CDATA, XML's own entities, elements of other namespaces,
 * comments) reads as XML says.
 */
import fs from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { readMspdi } from '../../../src/services/plans/mspdi-reader.ts';
import { MAX_IMPORT_BYTES } from '../../../src/services/plans/plan.ts';
import { readXml } from '../../../src/services/plans/xml.ts';
import { bytes, mspdi, NS, refusal, task } from './mspdi-document.ts';

const refused = (text: string | Buffer) =>
  refusal(() => readMspdi(typeof text === 'string' ? bytes(text) : text));

/** The fs calls made while `read` runs (Node's own fs, not ours: saxes has no I/O to mock). */
function fileCalls(read: () => unknown): string[] {
  const calls: string[] = [];
  const names = [
    'openSync',
    'readFileSync',
    'readSync',
    'open',
    'readFile',
    'createReadStream',
    'existsSync',
    'statSync',
  ] as const;
  const saved = names.map((name) => fs[name]);
  for (const name of names) {
    const original = fs[name] as (...args: unknown[]) => unknown;
    (fs as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      calls.push(`${name} ${String(args[0])}`);
      return original(...args);
    };
  }
  syncBuiltinESMExports();
  try {
    read();
  } catch {
    // The refusal is asserted elsewhere; here only what was opened.
  } finally {
    names.forEach((name, i) => ((fs as unknown as Record<string, unknown>)[name] = saved[i]));
    syncBuiltinESMExports();
  }
  return calls;
}

t.test(
  'an external entity naming a local file is refused with its DOCTYPE, the file never opened',
  async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'xxe-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const secret = path.join(dir, 'secret.txt');
    writeFileSync(secret, 'the-secret-words');
    t.ok(
      fileCalls(() => fs.readFileSync(secret)).includes(`openSync ${secret}`),
      'the watch sees a file opened',
    );
    const documents = [
      `<?xml version="1.0"?>\n<!DOCTYPE Project [<!ENTITY xxe SYSTEM "file://${secret}">]>\n<Project xmlns="${NS}"><Name>&xxe;</Name></Project>`,
      `<!DOCTYPE Project SYSTEM "file://${secret}">\n<Project xmlns="${NS}"/>`,
      `<!DOCTYPE Project [<!ENTITY % p SYSTEM "file://${secret}"> %p;]>\n<Project xmlns="${NS}"/>`,
      `<!DOCTYPE Project PUBLIC "-//x//y" "${secret}">\n<Project xmlns="${NS}"/>`,
    ];
    for (const document of documents) {
      const calls = fileCalls(() => readMspdi(bytes(document)));
      t.strictSame(
        calls.filter((c) => c.includes(dir)),
        [],
        'nothing under the directory is touched',
      );
      const { code, message, errors } = refused(document);
      t.equal(code, 'VALIDATION_FAILED');
      t.match(message, /DOCTYPE: no DTD is read/);
      t.notOk(message.includes('the-secret-words'), 'the file is not in the answer');
      t.equal(errors.length, 1);
      t.equal(errors[0]?.line, document.startsWith('<?xml') ? 2 : 1, 'the line of the DOCTYPE');
    }
    const noDoctype = `<Project xmlns="${NS}"><Name>&xxe;</Name></Project>`;
    t.match(
      refused(noDoctype).message,
      /not well-formed XML: undefined entity/,
      'an entity never declared',
    );
  },
);

t.test('a billion laughs is refused at its DOCTYPE, nothing expanded', async (t) => {
  const lol = [
    '<?xml version="1.0"?>',
    '<!DOCTYPE lolz [',
    ' <!ENTITY lol "lol">',
    ...Array.from(
      { length: 9 },
      (_, i) => ` <!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`,
    ),
    ']>',
    `<Project xmlns="${NS}"><Name>&lol9;</Name></Project>`,
  ].join('\n');
  const { code, message, errors } = refused(lol);
  t.equal(code, 'VALIDATION_FAILED');
  t.match(message, /DOCTYPE/);
  t.equal(errors[0]?.line, 13, 'where the DOCTYPE ends');
  t.ok(message.length < 300, 'a short answer: nothing was expanded into it');
});

t.test('a body over the limit is refused by its size, before it is decoded', async (t) => {
  // 12 MB of what would be refused as XML, were it read: the size answers first.
  const big = Buffer.alloc(12 * 1024 * 1024, 0xff);
  big.write('<!DOCTYPE x [');
  const { code, message } = refused(big);
  t.equal(code, 'PAYLOAD_TOO_LARGE');
  t.match(message, `at most ${MAX_IMPORT_BYTES} bytes`);
  t.equal(
    refused(Buffer.alloc(MAX_IMPORT_BYTES + 1, 0x20)).code,
    'PAYLOAD_TOO_LARGE',
    'one byte over',
  );
  t.equal(
    refused(Buffer.alloc(MAX_IMPORT_BYTES, 0x20)).code,
    'VALIDATION_FAILED',
    'at the limit it is read (and is no document)',
  );
});

t.test('the root must be Project in MS Project’s namespace', async (t) => {
  const cases: [string, RegExp][] = [
    [
      `<Project xmlns="http://example.com/project"/>`,
      /root element is Project in namespace http:\/\/example.com\/project, not Project in namespace/,
    ],
    [`<Project/>`, /root element is Project \(in no namespace\)/],
    [`<Projects xmlns="${NS}"/>`, /root element is Projects in namespace/],
    [
      `<html><head><title>x</title></head><body><p>hello<br></body></html>`,
      /root element is html \(in no namespace\)/,
    ],
    [`<!DOCTYPE html>\n<html><body></body></html>`, /DOCTYPE/],
    [
      `<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>`,
      /root element is svg in namespace/,
    ],
  ];
  for (const [document, pattern] of cases) {
    const { code, message, errors } = refused(document);
    t.equal(code, 'VALIDATION_FAILED', document.slice(0, 30));
    t.match(message, pattern);
    t.equal(typeof errors[0]?.line, 'number');
  }
  const prefixed = `<p:Project xmlns:p="${NS}"><p:Name>Prefixed</p:Name></p:Project>`;
  t.equal(readMspdi(bytes(prefixed)).name, 'Prefixed', 'a prefix for the namespace reads the same');
});

t.test('XML that is not well-formed is refused naming its line', async (t) => {
  const whole = mspdi({ tasks: [task(1, 'One'), task(2, 'Two')] });
  const cut = whole.slice(0, whole.indexOf('<Name>Two'));
  const truncated = refused(cut);
  t.equal(truncated.code, 'VALIDATION_FAILED');
  t.match(truncated.message, /not well-formed XML: unclosed tag/);
  t.equal(truncated.errors[0]?.line, cut.split('\n').length, 'the last line read');
  const cases: [string, RegExp, number][] = [
    ['', /must contain a root element/, 1],
    ['   \n\n', /must contain a root element/, 3],
    ['{"name": "a flow"}', /text data outside of root node/, 1],
    [`<Project xmlns="${NS}">\n<Name>x</Nme>\n</Project>`, /unexpected close tag/, 2],
    [`<Project xmlns="${NS}"/>\ntrailing`, /text data outside of root node/, 2],
    [`<Project xmlns="${NS}"><Name>a & b</Name></Project>`, /not well-formed XML/, 1],
  ];
  for (const [document, pattern, line] of cases) {
    const { errors, message } = refused(document);
    t.match(message, pattern, JSON.stringify(document.slice(0, 20)));
    t.equal(errors[0]?.line, line, `line ${line}`);
    t.equal(typeof errors[0]?.column, 'number', 'and its column');
  }
});

t.test(
  'only UTF-8: a declared other encoding, or bytes that are not UTF-8, are refused',
  async (t) => {
    const latin = refused(`<?xml version="1.0" encoding="ISO-8859-1"?>\n<Project xmlns="${NS}"/>`);
    t.match(latin.message, /declares encoding ISO-8859-1: only UTF-8 is read/);
    const broken = Buffer.concat([
      bytes(`<Project xmlns="${NS}">\n<Name>ok</Name>\n<Name>`),
      Buffer.from([0xc3, 0x28]),
      bytes('</Name></Project>'),
    ]);
    const notUtf8 = refused(broken);
    t.match(notUtf8.message, /is not UTF-8 text/);
    t.equal(notUtf8.errors[0]?.line, 3, 'the first line that is not UTF-8');
    const bom = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      bytes(
        `<?xml version="1.0" encoding="utf-8"?><Project xmlns="${NS}"><Title>Bom</Title></Project>`,
      ),
    ]);
    t.equal(readMspdi(bom).name, 'Bom', 'a byte order mark is dropped; utf-8 in any case is read');
  },
);

t.test(
  'nesting deeper than any MSPDI document, or an element of many attributes, is refused',
  async (t) => {
    const deep = `<Project xmlns="${NS}">${'<a>'.repeat(40)}${'</a>'.repeat(40)}</Project>`;
    t.match(refused(deep).message, /nest deeper than 32/);
    const attributes = Array.from({ length: 65 }, (_, i) => `a${i}="${i}"`).join(' ');
    t.match(
      refused(`<Project xmlns="${NS}"><Name ${attributes}/></Project>`).message,
      /more than 64 attributes/,
    );
    const fine = Array.from({ length: 63 }, (_, i) => `a${i}="${i}"`).join(' ');
    t.equal(
      readMspdi(bytes(`<Project xmlns="${NS}" ${fine}><Title>ok</Title></Project>`)).name,
      'ok',
      '64 are read (xmlns among them)',
    );
  },
);

t.test(
  'what the reader keeps: fields by the shape, XML’s own entities and CDATA, other namespaces skipped',
  async (t) => {
    const text = [
      `<Project xmlns="${NS}" xmlns:x="http://example.com/x">`,
      '<!-- a comment --><?pi data?>',
      '<Name>R&amp;D &#x41;&#66; <![CDATA[<kept>]]></Name>',
      '<Name>second</Name>',
      '<x:Name>other namespace</x:Name>',
      '<Tasks><Task><UID>1</UID><Baseline><UID>9</UID></Baseline></Task><x:Task><UID>2</UID></x:Task></Tasks>',
      '<Unknown><Name>no</Name></Unknown>',
      '</Project>',
    ].join('\n');
    const seen: string[] = [];
    const root = readXml(text, {
      root: 'Project',
      namespace: NS,
      what: 'MSPDI document',
      shape: { fields: ['Name'], records: { Tasks: { records: { Task: { fields: ['UID'] } } } } },
      onRecord: (record) => seen.push(`${record.name}@${record.line}`),
    });
    t.strictSame(root.fields, { Name: 'R&D AB <kept>' }, 'the first Name, decoded and trimmed');
    t.strictSame(root.lines, { Name: 3 });
    const tasks = root.records[0];
    t.equal(tasks?.records.length, 1, 'the other namespace’s Task is skipped');
    t.strictSame(tasks?.records[0]?.fields, { UID: '1' }, 'a Baseline’s UID is not the task’s');
    t.strictSame(seen, ['Task@6', 'Tasks@6'], 'each kept record as it closes');
  },
);
