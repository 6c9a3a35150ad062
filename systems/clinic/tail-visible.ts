/**
 * The patient-visible side of the service-tail scanner (service-tail.ts): whitespace and fence
 * debris held as a gap until the next visible character decides what it becomes.
 */

/** Cut markers inside the held gap (never part of model text in the gap, which holds only whitespace and fence debris). */
export const CUT_SIGNAL = "\u0000";
export const CUT_STATE = "\u0001";
/** A run of whitespace and backticks: what a gap is made of (besides "json" after backticks). */
const GAP_RUN = /[ \t\r\n`]+/g;

/** Normalizes a whitespace run: no spaces before a newline, at most one blank line. */
function normalizeWs(run: string): string {
  if (!run.includes("\n")) return run;
  return run.replace(/[ \t\r]+\n/g, "\n").replace(/\n{3,}/g, "\n\n");
}

/**
 * The patient-visible side. Whitespace and code-fence debris ("```json") are held as a gap until
 * the next visible character decides: a gap that touches a cut tail loses its fences and becomes
 * one separator; a gap at the start or the end of the reply is dropped (the reply is trimmed).
 */
export function createVisible(out: (s: string) => void) {
  let started = false;
  let gap = "";
  let hasCut = false;
  /** -1: the gap does not end in a fence; n ≥ 0: it ends in backticks then n letters of "json". */
  let fence = -1;
  const flushGap = () => {
    if (!started) {
      gap = "";
    } else if (gap) {
      let g = gap;
      if (hasCut) {
        g = g
          .replace(/`+(?:j(?:s(?:o(?:n)?)?)?)?/gi, "")
          .replaceAll(CUT_SIGNAL, " ")
          .replaceAll(CUT_STATE, "\n");
        out(g.includes("\n") ? normalizeWs(g) : " ");
      } else {
        // The common gap is a space between words: nothing to normalize.
        out(g.includes("\n") ? g.replace(/[ \t\r\n]+/g, normalizeWs) : g);
      }
    }
    gap = "";
    hasCut = false;
    fence = -1;
  };
  return {
    text(s: string) {
      let pos = 0;
      while (pos < s.length) {
        // Letters of "json" right after backticks stay in the gap ("```json" is fence debris).
        if (fence >= 0 && fence < 4) {
          const from = pos;
          while (pos < s.length && fence < 4 && s[pos]!.toLowerCase() === "json"[fence]) ((gap += s[pos++]), fence++);
          if (pos > from) continue;
        }
        GAP_RUN.lastIndex = pos;
        const m = GAP_RUN.exec(s);
        const end = m ? m.index : s.length;
        if (end > pos) {
          // Visible text: it decides the pending gap, and ends any fence in progress ("`!json" is text).
          if (gap) flushGap();
          out(s.slice(pos, end));
          started = true;
          fence = -1;
        }
        if (!m) break;
        gap += m[0];
        fence = m[0].endsWith("`") ? 0 : -1;
        pos = end + m[0].length;
      }
    },
    cut(kind: "signal" | "state") {
      gap += kind === "signal" ? CUT_SIGNAL : CUT_STATE;
      hasCut = true;
      fence = -1;
    },
    /** The reply is over: a trailing gap (whitespace, a closing fence) is dropped. */
    end() {
      gap = "";
      hasCut = false;
    },
  };
}
