import http from "node:http";
import https from "node:https";

/**
 * A `fetch` for the `openai` SDK on node:http(s). The platform fetch (undici) costs about a
 * millisecond of CPU per turn across its request/response machinery; a model call needs only a
 * POST with a string body and a byte stream back. What the SDK and openai-client.ts rely on is
 * kept as fetch does it:
 *  - an abort (the SDK's timeout, the caller, our deadline) rejects with the signal's reason, a
 *    DOMException "AbortError" by default, before the headers, and errors the body after them;
 *  - a connection that cannot be made or breaks before the headers rejects with a TypeError
 *    ("fetch failed", the cause attached), which openai-client.ts counts as a network failure;
 *  - a body cut mid-stream errors the stream with a TypeError ("terminated").
 * Anything this does not handle (a Request object, a streamed or form request body) goes to the
 * platform fetch unchanged. Redirects are followed as fetch's default "follow" does.
 */

export interface HttpFetchOptions {
  /** How long an idle kept-alive socket stays open (undici's default is 4 s; servers often close at 5 s). */
  idleSocketMs?: number;
}

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;

/** A plain object of string values whose names are already lower case, as Headers would give them. */
function isLowerCaseRecord(h: object): h is Record<string, string> {
  for (const [k, v] of Object.entries(h)) if (typeof v !== "string" || k !== k.toLowerCase()) return false;
  return true;
}

const abortReason = (signal: AbortSignal) =>
  signal.reason ?? new DOMException("This operation was aborted", "AbortError");

export function createHttpFetch(o: HttpFetchOptions = {}): typeof fetch {
  const idleSocketMs = o.idleSocketMs ?? 4_000;
  // One keep-alive agent per origin: every model call of a turn reuses a warm socket.
  const agents = new Map<string, http.Agent>();
  const agentFor = (url: URL) => {
    let a = agents.get(url.origin);
    if (!a) {
      const opts = { keepAlive: true, timeout: idleSocketMs, scheduling: "lifo" as const };
      a = url.protocol === "https:" ? new https.Agent(opts) : new http.Agent(opts);
      agents.set(url.origin, a);
    }
    return a;
  };

  const httpFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const body = init?.body;
    const plainBody = body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array;
    if (typeof input !== "string" && !(input instanceof URL)) return fetch(input, init);
    if (!plainBody) return fetch(input, init);
    const url = new URL(input);
    if (url.protocol !== "http:" && url.protocol !== "https:") return fetch(input, init);
    let headers: Record<string, string> = {};
    // The SDK hands over a Headers, or a plain object of lower-case names (sdk-headers.ts): read
    // either as it is rather than copying it into another first.
    const given = init?.headers;
    if (given instanceof Headers) given.forEach((v, k) => (headers[k] = v));
    else if (given && !Array.isArray(given) && isLowerCaseRecord(given)) headers = { ...given };
    else if (given) new Headers(given).forEach((v, k) => (headers[k] = v));
    return send(
      url,
      (init?.method ?? "GET").toUpperCase(),
      headers,
      body as string | Uint8Array | undefined,
      init?.signal ?? undefined,
      0,
    );
  };

  function send(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body: string | Uint8Array | undefined | null,
    signal: AbortSignal | undefined,
    redirects: number,
  ): Promise<Response> {
    return new Promise<Response>((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      const payload = body == null ? undefined : typeof body === "string" ? Buffer.from(body) : body;
      if (payload) headers["content-length"] = String(payload.byteLength);
      const lib = url.protocol === "https:" ? https : http;
      const req = lib.request(url, { method, headers, agent: agentFor(url) });
      let settled = false;
      // Until the headers: an abort rejects the promise. After them the body stream carries it.
      let onAbort = () => {
        settled = true;
        req.destroy();
        reject(abortReason(signal!));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const unlisten = () => signal?.removeEventListener("abort", onAbort);
      // `on`, not `once`: a socket can report more than one error, and an unheard one would crash the process.
      req.on("error", (err) => {
        if (settled) return;
        settled = true;
        unlisten();
        reject(new TypeError("fetch failed", { cause: err }));
      });
      req.once("response", (res) => {
        res.on("error", () => {}); // a body cut short is reported through "close" (pullBody)
        if (settled) {
          res.destroy();
          return;
        }
        settled = true;
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (REDIRECT_STATUS.has(status) && location !== undefined) {
          unlisten();
          res.resume();
          if (redirects >= MAX_REDIRECTS)
            return reject(new TypeError("fetch failed", { cause: new Error("redirect count exceeded") }));
          const next = new URL(location, url);
          // As fetch: 303, and 301/302 after a POST, become a GET without a body.
          const toGet = status === 303 || ((status === 301 || status === 302) && method === "POST");
          const h = { ...headers };
          if (toGet) {
            delete h["content-length"];
            delete h["content-type"];
          }
          if (next.origin !== url.origin) delete h["authorization"];
          resolve(
            send(
              next,
              toGet ? (method === "HEAD" ? "HEAD" : "GET") : method,
              h,
              toGet ? undefined : body,
              signal,
              redirects + 1,
            ),
          );
          return;
        }
        const out = new Headers();
        const raw = res.rawHeaders;
        for (let i = 0; i < raw.length; i += 2) out.append(raw[i]!, raw[i + 1]!);
        const noBody = method === "HEAD" || NULL_BODY_STATUS.has(status);
        let stream: ReadableStream<Uint8Array> | null = null;
        if (noBody) {
          unlisten();
          res.resume();
        } else {
          stream = pullBody(res, signal, unlisten);
          // The body now answers an abort: swap the listener so the promise is not touched again.
          signal?.removeEventListener("abort", onAbort);
          onAbort = () => res.destroy(abortReason(signal!));
          signal?.addEventListener("abort", onAbort, { once: true });
        }
        resolve(new Response(stream, { status, statusText: res.statusMessage ?? "", headers: out }));
      });
      req.end(payload);
    });
  }

  /**
   * The body by hand: chunks enqueued as they arrive, the socket paused while the reader is
   * behind (backpressure). Cheaper than Readable.toWeb: 1.11 against 1.26 ms of CPU per
   * router+branch call pair (undici's fetch: 1.78), measured through the SDK on loopback.
   */
  function pullBody(res: http.IncomingMessage, signal: AbortSignal | undefined, unlisten: () => void) {
    let ended = false;
    return new ReadableStream<Uint8Array>(
      {
        start(c) {
          res.on("data", (chunk: Buffer) => {
            if (ended) return; // cancelled by the reader: what was already buffered is dropped
            c.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
            if ((c.desiredSize ?? 1) <= 0) res.pause();
          });
          res.once("end", () => {
            if (ended) return;
            ended = true;
            unlisten();
            c.close();
          });
          // "close" without "end": the socket broke mid-body, or an abort destroyed it.
          res.once("close", () => {
            if (ended) return;
            ended = true;
            unlisten();
            c.error(
              signal?.aborted ? abortReason(signal) : new TypeError("terminated", { cause: res.errored ?? undefined }),
            );
          });
        },
        pull() {
          if (res.isPaused()) res.resume();
        },
        cancel() {
          ended = true;
          unlisten();
          res.destroy();
        },
      },
      { highWaterMark: 16 * 1024, size: (c) => c.byteLength },
    );
  }

  return httpFetch as typeof fetch;
}
