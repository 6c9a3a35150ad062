import { Hono } from "hono";
import { beforeAll, describe, expect, it } from "vitest";
import { sseResponse } from "../../http/sse-response";
import { registry } from "../../http/observability/metrics";
import { useFetchServers } from "../utils/server";

/** A metric's value (a histogram's observation count) in this process's registry. */
async function metric(name: string): Promise<number> {
  const m = await registry.getSingleMetric(name)!.get();
  return m.values.find((v) => (v as { metricName?: string }).metricName?.endsWith("_count") ?? true)?.value ?? 0;
}

let aborted: () => void = () => {};
const abortedOnce = () => new Promise<void>((resolve) => (aborted = resolve));

const app = new Hono();
app.get("/three", (c) =>
  sseResponse(c, async (s) => {
    for (let i = 1; i <= 3; i++) await s.write(`event: token\ndata: {"n":${i}}\nid: ${i}\n\n`);
  }),
);
app.get("/slow", (c) =>
  sseResponse(c, async (s) => {
    await new Promise((r) => setTimeout(r, 1_000));
    await s.write(`event: token\ndata: {"n":1}\nid: 1\n\n`);
  }),
);
app.get("/endless", (c) =>
  sseResponse(c, async (s) => {
    let gone = false;
    s.onAbort(() => {
      gone = true;
      aborted();
    });
    // Big writes until the client leaves: back-pressure must not hang the loop.
    const chunk = `data: ${"x".repeat(64 * 1024)}\n\n`;
    while (!gone) await s.write(chunk);
  }),
);

const serveFetch = useFetchServers();
let url: string;
beforeAll(async () => {
  url = await serveFetch(app.fetch);
});

describe("sseResponse", () => {
  it("writes straight to Node's response: event-stream headers, every event, then the end", async () => {
    const res = await fetch(`${url}/three`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("cache-control")).toBe("no-cache, no-transform");
    const text = await res.text();
    expect(text.match(/^id: \d+$/gm)).toEqual(["id: 1", "id: 2", "id: 3"]);
  });

  it("sends the headers at once when the first event is slow to come", async () => {
    const t0 = performance.now();
    const res = await fetch(`${url}/slow`);
    expect(res.status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(500);
    expect(await res.text()).toContain("id: 1");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(900);
  });

  it("tells the writer when the client goes away, even while it waits on back-pressure", async () => {
    const gone = abortedOnce();
    const ac = new AbortController();
    const res = await fetch(`${url}/endless`, { signal: ac.signal });
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await expect(
      Promise.race([gone.then(() => "aborted"), new Promise((r) => setTimeout(() => r("still writing"), 5_000))]),
    ).resolves.toBe("aborted");
  });

  it("counts its writes and measures those that waited for a slow client's socket", async () => {
    const [writes0, waits0] = [await metric("ds_sse_writes_total"), await metric("ds_sse_write_wait_seconds")];
    const gone = abortedOnce();
    const ac = new AbortController();
    const res = await fetch(`${url}/endless`, { signal: ac.signal });
    const reader = res.body!.getReader();
    // A client slower than the server: the socket's buffers fill and writes wait for it to drain.
    for (let i = 0; i < 20; i++) {
      await reader.read();
      await new Promise((r) => setTimeout(r, 10));
    }
    ac.abort();
    await gone;
    const [writes1, waits1] = [await metric("ds_sse_writes_total"), await metric("ds_sse_write_wait_seconds")];
    expect(waits1 - waits0).toBeGreaterThan(0);
    expect(writes1 - writes0).toBeGreaterThanOrEqual(waits1 - waits0);
  });

  it("falls back to Hono's streamSSE off Node (app.request has no ServerResponse)", async () => {
    const res = await app.request("/three");
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect((await res.text()).match(/^id: \d+$/gm)).toEqual(["id: 1", "id: 2", "id: 3"]);
  });
});
