/** The part of bidi-js (1.0.x, no types of its own) the exports use: UAX #9 levels and reordering. */
declare module 'bidi-js' {
  export interface EmbeddingLevels {
    levels: Uint8Array;
    paragraphs: { start: number; end: number; level: number }[];
  }
  export interface Bidi {
    getEmbeddingLevels(text: string, direction?: 'ltr' | 'rtl'): EmbeddingLevels;
    getReorderedIndices(
      text: string,
      levels: EmbeddingLevels,
      start?: number,
      end?: number,
    ): number[];
    getBidiCharTypeName(char: string): string;
  }
  export default function bidiFactory(): Bidi;
}
