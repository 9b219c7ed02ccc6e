/** The part of fontkit (2.0.x, no types of its own) the exports use: a TrueType font, its shaping and its glyph outlines. */
declare module 'fontkit' {
  export interface PathCommand {
    command: 'moveTo' | 'lineTo' | 'quadraticCurveTo' | 'bezierCurveTo' | 'closePath';
    args: number[];
  }
  export interface Glyph {
    id: number;
    /** The code points the glyph was first made for. */
    codePoints: number[];
    advanceWidth: number;
    /** The outline in font units, y upwards. */
    path: { commands: PathCommand[] };
  }
  /** In font units. */
  export interface GlyphPosition {
    xAdvance: number;
    yAdvance: number;
    xOffset: number;
    yOffset: number;
  }
  export interface GlyphRun {
    glyphs: Glyph[];
    positions: GlyphPosition[];
  }
  export interface Font {
    unitsPerEm: number;
    /** Shapes `text` with the font's default features (GSUB, GPOS: kerning, marks). */
    layout(text: string): GlyphRun;
    hasGlyphForCodePoint(codePoint: number): boolean;
    getGlyph(id: number): Glyph;
    glyphForCodePoint(codePoint: number): Glyph;
    /**
     * The glyphs made so far, by id, each keeping the code points it was first made for (not
     * public: see fonts.ts `shape`).
     */
    _glyphs: Record<number, Glyph>;
  }
  /** One font (a collection's fonts are not used here). */
  export function create(buffer: Buffer): Font;
}
