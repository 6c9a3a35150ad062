/** Deepest nesting a request body may have: real bodies need a handful of levels; the Workbench snapshot about ten. */
export const MAX_JSON_DEPTH = 64;

/**
 * True when `text` nests objects/arrays deeper than `max`. One linear pass over the raw text,
 * before JSON.parse: a 20,000-deep body parses fine but then overflows the stack of every
 * recursive walk after it (a 500). Brackets inside strings do not count.
 */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92)
        i++; // backslash: skip the escaped character
      else if (ch === 34) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 123 || ch === 91) {
      if (++depth > max) return true;
    } else if (ch === 125 || ch === 93) depth--;
  }
  return false;
}
