/**
 * Makes src/web/http/assets/favicon.ico from favicon.svg: the icon at 16, 32 and 48 px as PNG
 * images in an ICO container (browsers ask for /favicon.ico whatever a page links). Run after
 * changing the SVG: `node --import tsx scripts/favicon.ts`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Resvg } from '@resvg/resvg-js';

const svg = readFileSync(new URL('../src/web/http/assets/favicon.svg', import.meta.url));
const images = [16, 32, 48].map((size) => ({
  size,
  png: new Resvg(svg, { fitTo: { mode: 'width', value: size } }).render().asPng(),
}));
const header = Buffer.alloc(6);
header.writeUInt16LE(1, 2);
header.writeUInt16LE(images.length, 4);
let offset = 6 + 16 * images.length;
const entries = images.map(({ size, png }) => {
  const entry = Buffer.alloc(16);
  entry.writeUInt8(size, 0);
  entry.writeUInt8(size, 1);
  entry.writeUInt16LE(1, 4);
  entry.writeUInt16LE(32, 6);
  entry.writeUInt32LE(png.length, 8);
  entry.writeUInt32LE(offset, 12);
  offset += png.length;
  return entry;
});
writeFileSync(
  new URL('../src/web/http/assets/favicon.ico', import.meta.url),
  Buffer.concat([header, ...entries, ...images.map((i) => i.png)]),
);
