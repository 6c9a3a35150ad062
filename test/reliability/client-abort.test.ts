import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { onServer } from "../utils/db";
import { eventsNamed, postSse } from "../utils/sse";
import { useServerProcesses } from "./processes";
import { newConversation } from "../systems/workbench/http-workbench-helpers";
import { clinicApi } from "../utils/clinic-api";

/**
 * A client that closes its connection halfway through a request body (a large POST cut
 * mid-body) under a real server process: the server logs it as `client_aborted` (info, status
 * 499), not as an internal error (500), counts no error, and goes on serving.
 */
const backend = onServer ? "PostgreSQL server" : "file-backed PGlite";

const fx = useServerProcesses();
const llm = fx.llm;

/** Sends the headers and `sent` bytes of a `declared`-byte JSON body, then closes the socket. */
function halfBody(path: string, declared: number, sent: number): Promise<void> {
  const { port } = new URL(fx.server.url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), "127.0.0.1", () => {
      const body = `{"text":"${"а".repeat(declared)}"}`;
      const bytes = Buffer.from(body).subarray(0, sent);
      s.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: half-body-${sent}\r\n\r\n`,
      );
      s.write(bytes, () => setTimeout(() => s.destroy(), 200));
    });
    s.on("close", () => resolve());
    s.on("error", reject);
  });
}

const logLines = () =>
  fx.server
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, any>);

async function until(pred: () => boolean, ms = 10_000) {
  const end = Date.now() + ms;
  while (!pred() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}

describe(`a request body cut by the client (real server process, ${backend})`, () => {
  it("is logged client_aborted (status 499), not an internal error; the server keeps serving", async () => {
    const thread = await clinicApi(fx.server.url).newThread();
    const conv = await newConversation(fx.server.url);
    // Small and large (1 MB declared, well under BODY_LIMIT_BYTES), on the clinic and the Workbench.
    const cuts: [string, number, number][] = [
      [`/v1/clinic/threads/${thread}/messages`, 20_000, 5_000],
      [`/v1/clinic/threads/${thread}/messages`, 500_000, 300_000],
      [`/v1/workbench/conversations/${conv}/messages`, 500_000, 64_000],
    ];
    for (const [path, declared, sent] of cuts) await halfBody(path, declared, sent);
    const ids = cuts.map(([, , sent]) => `half-body-${sent}`);
    await until(() => logLines().filter((l) => l.event === "request" && ids.includes(l.requestId)).length === 3);

    const lines = logLines();
    for (const id of ids) {
      const mine = lines.filter((l) => l.requestId === id);
      expect(mine.find((l) => l.event === "client_aborted")).toMatchObject({ level: "info" });
      expect(mine.find((l) => l.event === "request")).toMatchObject({ status: 499 });
    }
    expect(lines.filter((l) => l.msg === "internal error" || l.level === "error" || l.status === 500)).toEqual([]);

    const metrics = await (await fetch(`${fx.server.url}/metrics`)).text();
    expect(metrics).not.toMatch(/ds_errors_total\{[^}]*code="internal"/);
    const aborted = [...metrics.matchAll(/^ds_http_requests_total\{[^}]*status="499"\} (\d+)$/gm)];
    expect(aborted.reduce((n, m) => n + Number(m[1]), 0)).toBe(3);

    // Still serving: the same thread takes a whole message and answers it.
    llm.script("router", "general_info");
    llm.script("branch", "Здравствуйте! Приём стоит 2000 рублей.");
    const r = await postSse(`${fx.server.url}/v1/clinic/threads/${thread}/messages`, { text: "Сколько стоит приём?" });
    expect(r.status).toBe(200);
    expect(eventsNamed(r, "final")[0]).toMatchObject({ reply: "Здравствуйте! Приём стоит 2000 рублей." });
  });
});
