import { openSync, rmSync, writeSync, closeSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { onServer } from "../utils/db";
import { modelEnv, startServerProcess, useProcesses } from "./processes";
import { openSse } from "./sse-live";

/**
 * A full disk under the embedded database (issue 47: answered `500 internal`, which the API's
 * docs call a bug). The server process runs in a user and mount namespace of its own
 * (`unshare -rm`) with DATA_DIR on a 96 MB tmpfs, which the test fills through
 * /proc/<pid>/root: a real ENOSPC, and PGlite's real error (53100 "could not extend file").
 * Every request is then answered `storage_unavailable` — a 503 with Retry-After, or a turn's
 * `error` + `done` — never 500; once space is freed, turns are answered again, and SIGTERM ends
 * the process within its deadline.
 */
const COMMIT_MS = 2_000;
const fx = useProcesses();
const servers = fx.servers;

/** Writes zeros into `path` until the file system refuses: the disk is full. */
function fill(path: string): number {
  let written = 0;
  const fd = openSync(path, "w");
  try {
    for (const size of [1 << 20, 1 << 12])
      for (const buf = Buffer.alloc(size); ;)
        try {
          written += writeSync(fd, buf);
        } catch {
          break;
        }
  } finally {
    closeSync(fd);
  }
  return written;
}

describe.skipIf(onServer)("a full disk under the embedded database (tmpfs in a namespace)", () => {
  it("answers storage_unavailable (503 / error + done), never 500; serves again once space is freed", async () => {
    const dir = fx.storage.dataDir;
    const server = await startServerProcess(
      fx.storage,
      modelEnv(fx.llm, {
        COMMIT_TIMEOUT_MS: String(COMMIT_MS),
        RUN_CLOSE_TIMEOUT_MS: "1000",
        SHUTDOWN_GRACE_MS: "1000",
      }),
      120_000,
      ["unshare", "-rm", "sh", "-c", `mount -t tmpfs -o size=96m tmpfs '${dir}' && exec "$0" "$@"`],
    );
    servers.push(server);
    const created = await fetch(`${server.url}/v1/clinic/threads`, { method: "POST" });
    expect(created.status).toBe(201);
    const thread = ((await created.json()) as { threadId: string }).threadId;
    const turn = async (threadId: string, text: string) => {
      fx.llm.script("router", "general_info");
      fx.llm.script("branch", "Ответ клиники.");
      const s = await openSse(`${server.url}/v1/clinic/threads/${threadId}/messages`, { text });
      if (s.status !== 200)
        return {
          status: s.status,
          code: s.errorCode,
          retryAfter: s.headers.get("retry-after"),
        };
      await s.waitFor((all) => all.some((e) => e.event === "done"), 30_000);
      const error = s.events.find((e) => e.event === "error");
      return {
        status: 200,
        code: (error?.data as { code?: string } | undefined)?.code,
        final: s.events.some((e) => e.event === "final"),
        retryAfter: null,
      };
    };
    expect((await turn(thread, "Здравствуйте")).final).toBe(true);

    const filler = `/proc/${server.child.pid}/root${dir}/filler`;
    expect(fill(filler)).toBeGreaterThan(1 << 20);
    const seen: string[] = [];
    // Text that does not compress (a repeated phrase fits in a page already there).
    const syllables = ["ка", "ро", "ми", "ту", "ле", "ва", "зо", "пи", "ны", "ду", "ше", "бя"];
    const word = () =>
      Array.from({ length: 3 + Math.floor(Math.random() * 5) }, () => syllables[Math.floor(Math.random() * 12)]).join(
        "",
      );
    const long = () => Array.from({ length: 300 }, word).join(" ");
    for (let i = 0; i < 12; i++) {
      // A new conversation (its rows need space), then a long turn on the old one.
      const r = await fetch(`${server.url}/v1/clinic/threads`, { method: "POST" });
      if (r.status === 201) seen.push("201");
      else {
        const body = (await r.json()) as { error: { code: string } };
        seen.push(`${r.status} ${body.error.code}`);
        expect(r.status).toBe(503);
        expect(body.error.code).toBe("storage_unavailable");
        expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      }
      const t = await turn(thread, long());
      seen.push(t.final ? "turn ok" : `turn ${t.status} ${t.code}`);
    }
    expect(seen.some((s) => s.includes("storage_unavailable"))).toBe(true);
    expect(seen.filter((s) => !s.includes("storage_unavailable") && s !== "201" && s !== "turn ok")).toEqual([]);
    expect(server.output()).not.toMatch(/"code":"internal"/);

    rmSync(filler);
    expect((await turn(thread, "Спасибо")).final).toBe(true);
    const t0 = Date.now();
    await server.stop();
    const stoppedMs = Date.now() - t0;
    expect(server.child.exitCode).toBe(0);
    console.log(
      `full disk: ${seen.filter((s) => s.includes("storage_unavailable")).length} of ${seen.length} requests answered storage_unavailable (${[...new Set(seen)].join(", ")}); served again after freeing space; SIGTERM exit in ${stoppedMs} ms`,
    );
  }, 240_000);
});
