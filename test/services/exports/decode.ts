/** Decoding of exported files as a reader's software would: pngjs for PNG, pdf.js for PDF, saxes (a conforming XML 1.0 parser) for SVG. */
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { SaxesParser } from 'saxes';

export interface XmlText {
  /** The element the text is in, and its attributes. */
  element: string;
  attributes: Record<string, string>;
  text: string;
  /** The index of the parent element in the list, -1 for the root. */
  parent: number;
}

/**
 * Parses an SVG (or any XML) as a strict XML 1.0 parser does, throwing on anything not
 * well-formed (a control character, even as a character reference, included); every element
 * in document order with its attributes, its parent and its own text (entities resolved).
 */
export function parseXml(xml: string): XmlText[] {
  const parser = new SaxesParser({ xmlns: false });
  const all: XmlText[] = [];
  const open: number[] = [];
  let error: Error | null = null;
  parser.on('error', (e) => (error ??= e));
  parser.on('opentag', (tag) => {
    open.push(
      all.push({
        element: tag.name,
        attributes: tag.attributes as Record<string, string>,
        text: '',
        parent: open.at(-1) ?? -1,
      }) - 1,
    );
  });
  parser.on('text', (text) => {
    if (open.length > 0) all[open.at(-1)!]!.text += text;
  });
  parser.on('closetag', () => open.pop());
  parser.write(xml).close();
  if (error) throw error;
  return all;
}

export interface DecodedPdf {
  pages: number;
  /** Text of every page, items joined by spaces, pages by newlines. */
  text: string;
  /** The smallest rendered font size of any text item, in points. */
  minFontSize: number;
  items: number;
  /** Text of each page. */
  pageTexts: string[];
  /** The document information dictionary (Title, Subject, CreationDate, …). */
  info: Record<string, unknown>;
  /** Each page's text items where pdf.js places them: x, baseline y (upwards from the page's foot) and size in points. */
  pageItems: { str: string; x: number; y: number; size: number }[][];
}

export async function decodePdf(bytes: Buffer): Promise<DecodedPdf> {
  const pdf = await getDocument({
    data: new Uint8Array(bytes),
    useSystemFonts: false,
    isEvalSupported: false,
    verbosity: 0,
  }).promise;
  const texts: string[] = [];
  const pageItems: DecodedPdf['pageItems'] = [];
  let minFontSize = Infinity;
  let items = 0;
  for (let p = 1; p <= pdf.numPages; p++) {
    const page = await pdf.getPage(p);
    const content = await page.getTextContent();
    const parts: string[] = [];
    const placed: DecodedPdf['pageItems'][number] = [];
    for (const item of content.items) {
      if (!('str' in item)) continue;
      parts.push(item.str);
      if (item.str.trim() === '') continue;
      items++;
      // The item's matrix in page space: its vertical scale is the size the reader sees.
      const [, , c, d, e, f] = item.transform as number[];
      minFontSize = Math.min(minFontSize, Math.hypot(c!, d!));
      placed.push({ str: item.str, x: e!, y: f!, size: Math.hypot(c!, d!) });
    }
    texts.push(parts.join(' '));
    pageItems.push(placed);
    page.cleanup();
  }
  const pages = pdf.numPages;
  const { info } = await pdf.getMetadata();
  await pdf.destroy();
  return {
    pages,
    text: texts.join('\n'),
    minFontSize,
    items,
    pageTexts: texts,
    info: info as Record<string, unknown>,
    pageItems,
  };
}

export interface DecodedPng {
  width: number;
  height: number;
  /** Distinct colours among sampled pixels: a blank image has one. */
  colours: number;
  /** Share of sampled pixels that are not white. */
  inked: number;
}

export function decodePng(bytes: Buffer): DecodedPng {
  const png = PNG.sync.read(bytes);
  const colours = new Set<number>();
  let inked = 0;
  let sampled = 0;
  for (let i = 0; i < png.data.length; i += 4 * 7) {
    const [r, g, b] = [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!];
    colours.add((r << 16) | (g << 8) | b);
    if (r + g + b < 600) inked++;
    sampled++;
  }
  return { width: png.width, height: png.height, colours: colours.size, inked: inked / sampled };
}

/**
 * Runs a poppler-utils tool on the PDF (its path replaces `{pdf}` in the arguments, the
 * output's prefix `{out}`) and hands back stdout and the files it wrote; null when poppler-utils
 * is not installed.
 */
async function poppler(
  tool: string,
  args: string[],
  bytes: Buffer,
): Promise<{ stdout: string; files: Map<string, Buffer> } | null> {
  const dir = await mkdtemp(join(tmpdir(), `${tool}-`));
  try {
    const pdf = join(dir, 'in.pdf');
    await writeFile(pdf, bytes);
    const stdout = await new Promise<string | null>((resolve, reject) =>
      execFile(
        tool,
        args.map((a) => a.replace('{pdf}', pdf).replace('{out}', join(dir, 'out'))),
        (error, out) => {
          if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') resolve(null);
          else if (error) reject(error);
          else resolve(out);
        },
      ),
    );
    if (stdout === null) return null;
    const files = new Map<string, Buffer>();
    for (const name of await readdir(dir))
      if (name.startsWith('out')) files.set(name, await readFile(join(dir, name)));
    return { stdout, files };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The fonts a PDF uses and whether each is embedded, as poppler's `pdffonts` reports them; null without poppler-utils. */
export async function pdffonts(
  bytes: Buffer,
): Promise<{ name: string; embedded: boolean }[] | null> {
  const run = await poppler('pdffonts', ['{pdf}'], bytes);
  // name type encoding emb sub uni object ID: the header and a rule, then a line a font.
  return (
    run &&
    run.stdout
      .trim()
      .split('\n')
      .slice(2)
      .map((line) => {
        const cells = line.trim().split(/\s+/);
        return { name: cells[0]!, embedded: cells.at(-5) === 'yes' };
      })
  );
}

/** One page of a PDF as a printer would put it on paper: `pdftoppm` at `dpi`, decoded; null without poppler-utils. */
export async function pdfPage(bytes: Buffer, page: number, dpi = 72): Promise<PNG | null> {
  const run = await poppler(
    'pdftoppm',
    [
      '-png',
      '-r',
      String(dpi),
      '-f',
      String(page),
      '-l',
      String(page),
      '-singlefile',
      '{pdf}',
      '{out}',
    ],
    bytes,
  );
  return run && PNG.sync.read(run.files.get('out.png')!);
}
