/**
 * The start-up progress line (issue 45: a cold start was silent for a minute). On a terminal one
 * live line rewritten in place, so the steps do not scroll the banner away; anywhere else (a log
 * file, a container's stderr, a test reading the output) one plain line per step, since a
 * carriage return there only garbles the file. Always stderr: stdout carries the JSON log lines.
 */
export interface Progress {
  /** A step started ("applying migration 12/40 …"). */
  step(text: string): void;
  /** Start-up finished: clear the live line (a terminal) so the banner starts on a clean line. */
  done(): void;
}

export function createProgress(
  out: { write(s: string): unknown; isTTY?: boolean } = process.stderr,
  live = out.isTTY === true,
): Progress {
  let shown = false;
  return {
    step(text) {
      if (live) {
        out.write(`\r\x1b[2K… ${text}`);
        shown = true;
      } else out.write(`… ${text}\n`);
    },
    done() {
      if (live && shown) out.write("\r\x1b[2K");
      shown = false;
    },
  };
}

/** A progress sink that prints nothing (tests, benchmarks, in-process servers). */
export const silentProgress: Progress = { step() {}, done() {} };
