/**
 * A fetch that drops the connection after the `cut`-th SSE event of the next response (0: before
 * the client sees any header — the POST reached the server, its answer is lost). The real
 * connection is cancelled, so the server sees its client leave, as with a network failure.
 */
export interface CuttingFetch {
  fetch: typeof fetch;
  /** Arms one cut for the next event-stream response. */
  cutNext(afterEvents: number): void;
  /** How many cuts happened. */
  cuts: number;
}

export function cuttingFetch(): CuttingFetch {
  let armed: number | null = null;
  const state: CuttingFetch = {
    cuts: 0,
    cutNext(n) {
      armed = n;
    },
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if (armed === null || !(res.headers.get("content-type") ?? "").includes("text/event-stream")) return res;
      const cut = armed;
      armed = null;
      state.cuts++;
      const upstream = res.body!.getReader();
      if (cut === 0) {
        await upstream.cancel();
        throw new TypeError("fetch failed", {
          cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }),
        });
      }
      const decoder = new TextDecoder();
      const encoder = new TextEncoder();
      let text = "";
      let seen = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(ctrl) {
          for (;;) {
            // Forward whole blocks; stop right after the cut-th event (comments are not events).
            let end: number;
            while ((end = text.indexOf("\n\n")) >= 0) {
              const block = text.slice(0, end + 2);
              text = text.slice(end + 2);
              ctrl.enqueue(encoder.encode(block));
              if (!block.startsWith(":") && ++seen >= cut) {
                await upstream.cancel();
                ctrl.error(
                  new TypeError("terminated", {
                    cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }),
                  }),
                );
                return;
              }
            }
            const { done, value } = await upstream.read();
            if (done) return ctrl.close();
            text += decoder.decode(value, { stream: true });
          }
        },
        cancel: () => upstream.cancel(),
      });
      return new Response(body, { status: res.status, headers: res.headers });
    },
  };
  return state;
}
