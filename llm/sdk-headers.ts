import type OpenAI from "openai";

/** What the SDK's (private) `buildHeaders` is given; only what the cache key needs is typed. */
interface BuildArgs {
  options: { headers?: unknown; idempotencyKey?: unknown; timeout?: number; __security?: unknown };
  method: string;
  bodyHeaders?: Record<string, string> | undefined;
  retryCount: number;
}

interface SdkInternals {
  buildHeaders?: (a: BuildArgs) => Promise<Headers>;
  idempotencyHeader?: string;
  _provider?: unknown;
  _options: { apiKey?: unknown; workloadIdentity?: unknown };
}

/**
 * The `openai` SDK builds every request's headers anew: about ten entries (user agent, platform,
 * retry count, timeout, auth, content type) merged one by one through undici `Headers` objects,
 * each name validated, deleted and appended, and then iterated again for its request log detail
 * and by our transport (http-fetch.ts). With a fixed API key, no per-request headers and no
 * idempotency key, they are the same for every call with the same method, retry count, timeout
 * and body type: the SDK builds them once per such shape, and each request gets a copy as a
 * plain object — cheaper for the SDK's log detail and for the transport to read. Measured in the
 * peer-harness profile (issue 46): the SDK's header building was ~1.5 % of a turn's CPU.
 *
 * `buildHeaders` is the SDK's own method, not public API: if a version no longer has it, or the
 * client's key is a function (tokens that rotate), nothing is changed. test/llm/sdk-headers.test.ts
 * checks that a request carries exactly the headers the SDK alone sends.
 */
export function reuseRequestHeaders(client: OpenAI): void {
  const c = client as unknown as SdkInternals;
  const build = c.buildHeaders;
  if (typeof build !== "function" || typeof c._options.apiKey !== "string" || c._options.workloadIdentity) return;
  const cache = new Map<string, Record<string, string>>();
  c.buildHeaders = async function (this: SdkInternals, a: BuildArgs) {
    const o = a.options;
    if (o.headers != null || o.idempotencyKey != null || this.idempotencyHeader || this._provider)
      return build.call(this, a);
    // Which credentials the operation takes (`{ bearerAuth: true }` for chat completions) picks the auth headers.
    const key = `${a.method} ${a.retryCount} ${o.timeout} ${JSON.stringify(o.__security ?? null)} ${JSON.stringify(a.bodyHeaders ?? null)}`;
    let h = cache.get(key);
    if (!h) {
      const built = await build.call(this, a);
      const plain: Record<string, string> = {};
      built.forEach((v, k) => (plain[k] = v));
      cache.set(key, (h = plain));
    }
    return { ...h } as unknown as Headers;
  };
}
