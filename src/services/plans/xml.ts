/**
 * XML from strangers, read with saxes: a streaming, non-validating parser that checks
 * well-formedness and namespaces and has no I/O at all, so it never fetches an external entity
 * or DTD, and expands no entity but XML's five and character references (any other is an error).
 * On top of that a DOCTYPE is refused outright (no DTD is ever read, not even its internal
 * subset), and so is a root of another name or namespace, nesting deeper than any MSPDI
 * document, or an element with more attributes than one would need.
 *
 * What is kept is only what a shape names: the leaf fields' text (the first of each name) and
 * the records within, every other element parsed for well-formedness and dropped as it goes, so
 * memory follows what the reader needs, not the document.
 */
import { SaxesParser } from 'saxes';
import { unreadableAt } from './findings.ts';

/** What to keep of an element: the text of its leaf fields, and the records within it. */
export interface Shape {
  readonly fields?: readonly string[];
  readonly records?: Readonly<Record<string, Shape>>;
}

/** A kept element: where it opened, its fields' text (trimmed) and lines, its records in order. */
export interface XmlRecord {
  readonly name: string;
  readonly line: number;
  readonly fields: Partial<Record<string, string>>;
  readonly lines: Partial<Record<string, number>>;
  readonly records: XmlRecord[];
}

export interface XmlDocument {
  /** The root element's local name and namespace. */
  readonly root: string;
  readonly namespace: string;
  /** What to keep of the root. */
  readonly shape: Shape;
  /** What the document is, in refusals ("MSPDI document"). */
  readonly what: string;
  /** Called as each kept record closes (complete): a reader's place to count and refuse early. */
  readonly onRecord?: (record: XmlRecord) => void;
}

/** Deeper than any MSPDI element (Project/Calendars/…/WorkingTime/FromTime is 8). */
const MAX_DEPTH = 32;
const MAX_ATTRIBUTES = 64;

/** An open element: a record (with its shape), a field being read, or one being skipped. */
type Frame =
  | { kind: 'record'; record: XmlRecord; shape: Shape }
  | { kind: 'field'; name: string; line: number; text: string }
  | { kind: 'skip' };

const SKIP: Frame = { kind: 'skip' };

/** The root record of `text`, or VALIDATION_FAILED naming the line of the first problem. */
export function readXml(text: string, doc: XmlDocument): XmlRecord {
  const parser = new SaxesParser({ xmlns: true, position: true });
  const refuse = (message: string): never => {
    throw unreadableAt(parser.line, message, parser.column);
  };
  const stack: Frame[] = [];
  let root: XmlRecord | null = null;
  let attributes = 0;

  parser.on('error', (error) => {
    // saxes words it "line:column: what"; the line and column are the parser's own.
    refuse(`the ${doc.what} is not well-formed XML: ${error.message.replace(/^\d+:\d+: /, '')}`);
  });
  parser.on('xmldecl', ({ encoding }) => {
    if (encoding !== undefined && !/^utf-?8$/i.test(encoding))
      refuse(`the ${doc.what} declares encoding ${encoding}: only UTF-8 is read`);
  });
  parser.on('doctype', () =>
    refuse(`the ${doc.what} has a DOCTYPE: no DTD is read here (save it without one)`),
  );
  parser.on('opentagstart', () => {
    attributes = 0;
    if (stack.length >= MAX_DEPTH) refuse(`elements nest deeper than ${MAX_DEPTH}`);
  });
  parser.on('attribute', () => {
    if (++attributes > MAX_ATTRIBUTES)
      refuse(`an element has more than ${MAX_ATTRIBUTES} attributes`);
  });
  parser.on('opentag', (tag) => {
    const parent = stack[stack.length - 1];
    if (parent === undefined) {
      if (tag.local !== doc.root || tag.uri !== doc.namespace)
        refuse(
          `the root element is ${describe(tag.local, tag.uri)}, not ${describe(doc.root, doc.namespace)}`,
        );
      root = { name: tag.local, line: parser.line, fields: {}, lines: {}, records: [] };
      stack.push({ kind: 'record', record: root, shape: doc.shape });
      return;
    }
    stack.push(
      parent.kind === 'record' && tag.uri === doc.namespace ? within(parent, tag.local) : SKIP,
    );
  });
  const onText = (chunk: string) => {
    const top = stack[stack.length - 1];
    if (top?.kind === 'field') top.text += chunk;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', () => {
    const frame = stack.pop();
    const parent = stack[stack.length - 1];
    if (
      frame?.kind === 'field' &&
      parent?.kind === 'record' &&
      !(frame.name in parent.record.fields)
    ) {
      parent.record.fields[frame.name] = frame.text.trim();
      parent.record.lines[frame.name] = frame.line;
    } else if (frame?.kind === 'record' && frame.record !== root) doc.onRecord?.(frame.record);
  });

  function within(parent: Frame & { kind: 'record' }, name: string): Frame {
    if (parent.shape.fields?.includes(name))
      return { kind: 'field', name, line: parser.line, text: '' };
    const shape = parent.shape.records?.[name];
    if (shape === undefined) return SKIP;
    const record: XmlRecord = { name, line: parser.line, fields: {}, lines: {}, records: [] };
    parent.record.records.push(record);
    return { kind: 'record', record, shape };
  }

  parser.write(text).close();
  // A document without a root is refused by close() ("document must contain a root element").
  return root as unknown as XmlRecord;
}

const describe = (local: string, uri: string) =>
  uri === '' ? `${local} (in no namespace)` : `${local} in namespace ${uri}`;

/** The records named `name` within a record (none: an empty list). */
export const recordsOf = (record: XmlRecord | undefined, name: string): XmlRecord[] =>
  record?.records.filter((r) => r.name === name) ?? [];

/** The first record named `name` within a record. */
export const recordOf = (record: XmlRecord | undefined, name: string): XmlRecord | undefined =>
  record?.records.find((r) => r.name === name);

/** The line of a record's field, or of the record where it has none. */
export const lineOf = (record: XmlRecord, field: string): number =>
  record.lines[field] ?? record.line;
