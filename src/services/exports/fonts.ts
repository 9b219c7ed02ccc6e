/** DejaVu from the `dejavu-fonts-ttf` package: the same glyphs on every machine, no system fonts. */
import { createRequire } from 'node:module';
import path from 'node:path';

const dir = path.join(path.dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');

export const FONT_REGULAR = path.join(dir, 'DejaVuSans.ttf');
export const FONT_BOLD = path.join(dir, 'DejaVuSans-Bold.ttf');
