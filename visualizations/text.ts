/**
 * Text width estimates for the diagram fonts. The server has no font metrics (and no browser),
 * so widths come from per-class character advances of a common sans-serif, rounded up: a box
 * slightly too wide reads fine, a label that overflows its box does not.
 */
const NARROW = new Set("il.,:;'|!()[]{}/\\`tfjrI ".split(""));
const WIDE = new Set("mwMW@%ЖШЩЮМФЫжшщюмфы".split(""));

export function textWidth(s: string, size: number): number {
  let em = 0;
  for (const ch of s) {
    if (NARROW.has(ch)) em += 0.32;
    else if (WIDE.has(ch)) em += 0.86;
    else if (/[A-Z]/.test(ch)) em += 0.66;
    else if (/[0-9]/.test(ch)) em += 0.56;
    else if (/[А-ЯЁ]/.test(ch)) em += 0.68;
    else if (/[а-яё]/.test(ch)) em += 0.58;
    else if (ch.charCodeAt(0) > 0x2000) em += 0.9;
    else em += 0.55;
  }
  return Math.ceil(em * size);
}

/** Monospace text (event names, guards): every character one advance of ~0.6em. */
export function monoWidth(s: string, size: number): number {
  return Math.ceil([...s].length * 0.61 * size) + 2;
}

/** Shortens a label to `max` characters with an ellipsis (the full text goes in a tooltip). */
export function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

export function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&#39;" })[c]!);
}
