/**
 * How hours read in the exports and on the pages that show a flow: a module of its own, so the
 * pages need not load the SVG renderer, which opens fontkit (about 0.3 s of CPU a process).
 */

/** Hours to one decimal: "12.5 h", or "no estimate". */
export const hoursText = (h: number | null): string =>
  h === null ? 'no estimate' : `${Number(h.toFixed(1))} h`;

/** A ranged estimate's ends, as hoursText writes hours: "8–40 h". */
export const rangeText = ({ low, high }: { low: number; high: number }): string =>
  `${Number(low.toFixed(1))}–${Number(high.toFixed(1))} h`;
