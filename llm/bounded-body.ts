// Bounds on reading a model's reply body, for every call, streamed or not: a cap on the bytes
// read (enforced while reading, so a body that never ends costs at most the cap, not the heap)
// and an idle timer per attempt that covers the body after its headers (the SDK's timeout ends
// when the headers arrive; a body that then stalls would hold the turn until the total deadline).

/** The body grew past its cap while being read. */
export class BodyTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the reply body exceeded ${maxBytes} bytes`);
  }
}

/** Bytes a whole JSON reply of `maxChars` characters may take: six per character (a `\uXXXX` escape) and the envelope. */
export const replyBodyBytes = (maxChars: number) => maxChars * 6 + 64 * 1024;

export interface IdleWatch {
  /** Data arrived: the idle clock starts again. */
  rearm(): void;
  /** True once no data came for `idleMs` and the attempt was aborted. */
  readonly stalled: boolean;
  stop(): void;
}

/**
 * Aborts `ac` when no data arrives for `idleMs`. One interval per attempt that looks at the time
 * of the last data (re-arming a timer per token costs more than the rest of reading it).
 */
export function watchIdle(ac: AbortController, idleMs: number): IdleWatch {
  let last = performance.now();
  let stalled = false;
  const timer = setInterval(
    () => {
      if (performance.now() - last < idleMs) return;
      stalled = true;
      ac.abort();
    },
    Math.max(10, Math.min(1_000, idleMs / 4)),
  );
  timer.unref();
  return {
    rearm: () => {
      last = performance.now();
    },
    get stalled() {
      return stalled;
    },
    stop: () => clearInterval(timer),
  };
}

/** Reads a whole body as text, failing with BodyTooLarge the moment it passes `maxBytes`. */
export async function readBodyCapped(res: Response, maxBytes: number, onData: () => void): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onData();
      size += value.byteLength;
      if (size > maxBytes) throw new BodyTooLarge(maxBytes);
      parts.push(value);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(parts));
}
