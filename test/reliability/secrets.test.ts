import { Writable } from "node:stream";
import { createLogger, useLogger } from "../../http/observability/logger";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { postSse, type SseResponse } from "../utils/sse";
import { registerTestRoutes } from "../utils/test-routes";
import { workspace } from "../systems/workbench/fixtures";
import { newConversation } from "../systems/workbench/http-workbench-helpers";

/**
 * No debug stage, log line, error body, stream event or stored row carries the model API key
 * or a bearer token — also when the model provider echoes the key back in its error message.
 */
const API_KEY = "sk-test-SECRET-a1b2c3d4e5f6";
const TOKEN = "tok-SECRET-789xyz";
const WRONG = "tok-WRONG-456qrs";
const secrets = [API_KEY, TOKEN, WRONG];
const debugDir = mkdtempSync(join(tmpdir(), "secrets-debug-"));
const logs: string[] = [];
const seen: string[] = [];
const original = { log: console.log, error: console.error, warn: console.warn };

// Before the server starts, so that its start-up lines are read too.
beforeAll(() => {
  // The JSON log too, at its most verbose.
  useLogger(createLogger(new Writable({ write: (chunk, _e, cb) => (logs.push(String(chunk)), cb()) }), "trace"));
  for (const k of ["log", "error", "warn"] as const)
    console[k] = (...a: unknown[]) =>
      void logs.push(
        a
          .map((x) => (x instanceof Error ? `${x.message} ${x.stack}` : typeof x === "string" ? x : JSON.stringify(x)))
          .join(" "),
      );
});
afterAll(() => {
  Object.assign(console, original);
  rmSync(debugDir, { recursive: true, force: true });
});
const server = useTestServer({
  llm: true,
  tokens: `acme:${TOKEN}`,
  env: { RUN_DETACH_GRACE_MS: "0", AI_DEBUG: "true", DEBUG_DIR: debugDir },
  extend: registerTestRoutes,
  log: (l) => logs.push(l),
  // The provider's key is the one the test looks for in everything it reads.
  configure: (config) => void Object.assign(config.llm, { apiKey: API_KEY, timeoutMs: 2_000 }),
});
const llm = server.llm;

const auth = { authorization: `Bearer ${TOKEN}` };
const keep = (r: SseResponse) => (seen.push(JSON.stringify(r.events), JSON.stringify(r.json ?? null)), r);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]));
}

describe("credentials never leak", () => {
  it("through turns that succeed and fail, with debug stages on", async () => {
    expect(llm.baseURL).toContain("127.0.0.1");
    // The provider checks the key we send — and echoes it back when it refuses.
    llm.script("router", { status: 401, echoAuth: true }, { status: 401, echoAuth: true }, "general_info");
    llm.script("branch", { status: 500, echoAuth: true }, { status: 500, echoAuth: true }, "Здравствуйте!");
    const thread = (
      (await (await fetch(`${server.url}/v1/clinic/threads`, { method: "POST", headers: auth })).json()) as {
        threadId: string;
      }
    ).threadId;
    keep(
      await postSse(`${server.url}/v1/clinic/threads/${thread}/messages`, { text: "Добрый день", debug: true }, auth),
    );
    keep(
      await postSse(
        `${server.url}/v1/clinic/threads/${thread}/messages`,
        { text: "Сколько стоит приём?", debug: true },
        auth,
      ),
    );
    keep(
      await postSse(
        `${server.url}/v1/clinic/threads/${thread}/messages`,
        { text: "Сколько стоит приём?", debug: true },
        auth,
      ),
    );

    llm.script(
      "answer",
      { status: 401, echoAuth: true },
      { status: 401, echoAuth: true },
      "Ответ [[composition-discount]].",
    );
    const conv = await newConversation(server.url, auth);
    keep(
      await postSse(
        `${server.url}/v1/workbench/conversations/${conv}/messages`,
        { text: "Что делает «Учёт остатков»?", workspace, debug: true },
        auth,
      ),
    );
    keep(
      await postSse(
        `${server.url}/v1/workbench/conversations/${conv}/messages`,
        { text: "Что делает «Учёт остатков»?", workspace, debug: true },
        auth,
      ),
    );

    const test = (
      (await (await fetch(`${server.url}/v1/test/conversations`, { method: "POST", headers: auth })).json()) as {
        conversationId: string;
      }
    ).conversationId;
    llm.script("answer", { status: 403, echoAuth: true });
    keep(await postSse(`${server.url}/v1/test/conversations/${test}/messages`, { text: "ау", debug: true }, auth));

    // A wrong token is refused without being repeated.
    const refused = await fetch(`${server.url}/v1/clinic/threads`, {
      method: "POST",
      headers: { authorization: `Bearer ${WRONG}` },
    });
    expect(refused.status).toBe(401);
    seen.push(await refused.text());
    expect(llm.calls.every((c) => c.model.startsWith("test-"))).toBe(true);
    expect(llm.count()).toBeGreaterThan(5);
  }, 60_000);

  it("…in what was sent to clients, logged, written as debug stages, or stored", async () => {
    const stored = await server.db.sql<{ text: string }[]>`
      select data::text as text from run_events union all select tail_data::text from runs where tail_data is not null union all select meta::text || text from messages union all select snapshot::text from machine_snapshots`;
    const debugFiles = files(debugDir);
    expect(debugFiles.length).toBeGreaterThan(0);
    const haystacks: [string, string][] = [
      ...seen.map((s, i) => [`response ${i}`, s] as [string, string]),
      ...logs.map((s, i) => [`log line ${i}`, s] as [string, string]),
      ...debugFiles.map((f) => [f, readFileSync(f, "utf8")] as [string, string]),
      ...stored.map((r, i) => [`stored row ${i}`, r.text] as [string, string]),
    ];
    // The echoed key did reach us: an error message carries the provider's words.
    expect(haystacks.some(([, s]) => s.includes("incorrect credentials"))).toBe(true);
    const leaks = haystacks.flatMap(([where, s]) =>
      secrets.filter((x) => s.includes(x)).map((x) => `${where}: ${x.slice(0, 12)}…`),
    );
    expect(leaks).toEqual([]);
    expect(logs.some((l) => l.includes('"event":"model_call"') && l.includes("model_unavailable"))).toBe(true);
  });
});
