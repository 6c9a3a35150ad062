import { trace, type Span, type Tracer, type TracerProvider } from "@opentelemetry/api";
import { Hono } from "hono";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActiveTurns } from "../../http/active-turns";
import { createLogger, useLogger } from "../../http/observability/logger";
import { registerObservabilityRoutes } from "../../http/observability/routes";
import { useTestServer } from "../utils/server";
import { eventsNamed, postSse } from "../utils/sse";
import { clinicApi, stepTail } from "../utils/clinic-api";

/** Issue 17 item 3: JSON logs, /metrics, /readyz and spans, over a real server and a scripted model. */

const SECRET_TOKEN = "tok-very-secret-4f1c9a";
const API_KEY = "sk-live-abcdefghijklmnopqrstuvwx";
const lines: Record<string, unknown>[] = [];
const spans: { name: string; attributes: Record<string, unknown>; ended: boolean }[] = [];
let raw = "";

/** A minimal tracer provider: records span names, as an SDK would export them. */
function recordingProvider(): TracerProvider {
  const tracer = {
    startSpan(name: string, opts?: { attributes?: Record<string, unknown> }) {
      const rec = { name, attributes: { ...(opts?.attributes ?? {}) }, ended: false };
      spans.push(rec);
      const span = {
        setAttribute: (k: string, v: unknown) => ((rec.attributes[k] = v), span),
        setAttributes: (a: Record<string, unknown>) => (Object.assign(rec.attributes, a), span),
        recordException: () => {},
        setStatus: () => span,
        end: () => void (rec.ended = true),
        spanContext: () => ({ traceId: "0".repeat(32), spanId: "0".repeat(16), traceFlags: 1 }),
        isRecording: () => true,
        addEvent: () => span,
        updateName: () => span,
      };
      return span as unknown as Span;
    },
    startActiveSpan(name: string, ...args: unknown[]) {
      const fn = args.at(-1) as (s: Span) => unknown;
      const opts = args.length > 1 ? (args[0] as { attributes?: Record<string, unknown> }) : undefined;
      return fn(this.startSpan(name, opts));
    },
  };
  return { getTracer: () => tracer as unknown as Tracer };
}

const A = { authorization: `Bearer ${SECRET_TOKEN}`, "content-type": "application/json" };

// Before the server's hooks: it logs and traces into these from its start.
beforeAll(() => {
  useLogger(
    createLogger(
      new Writable({
        write(chunk, _enc, cb) {
          raw += String(chunk);
          for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
          cb();
        },
      }),
      "info",
    ),
  );
  trace.setGlobalTracerProvider(recordingProvider());
});
afterAll(() => {
  trace.disable();
});
const server = useTestServer({
  llm: true,
  tokens: `acme:${SECRET_TOKEN}`,
  env: { RUN_DETACH_GRACE_MS: "0" },
  // The real key reaches the model server (echoAuth repeats it in its error): the logs must not.
  configure: (config) => void (config.llm.apiKey = API_KEY),
});
const llm = server.llm;

const newThread = () => clinicApi(server, SECRET_TOKEN).newThread();
const metricValue = (text: string, name: string, labels: Record<string, string> = {}) => {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.split(" ").at(-1));
  }
  return sum;
};
const scrape = async () => (await fetch(`${server.url}/metrics`)).text();

describe("logs, metrics and spans of one turn", () => {
  it("one line per turn with its request and model calls, with the ids; counters move", async () => {
    const before = await scrape();
    const id = await newThread();
    lines.length = 0;
    spans.length = 0;
    llm.script("router", "general_info");
    llm.script("branch", `Мы на Лесной, 5.${stepTail("answered")}`);
    const r = await postSse(
      `${server.url}/v1/clinic/threads/${id}/messages`,
      { text: "Какой у вас адрес?" },
      { ...A, "x-request-id": "req-test-1" },
    );
    expect(eventsNamed(r, "final")).toHaveLength(1);
    const runId = (eventsNamed(r, "run_started")[0] as { runId: string }).runId;
    await new Promise((res) => setTimeout(res, 50));

    const mine = lines.filter((l) => l.requestId === "req-test-1");
    // The turn is the request's only line: the request and the model calls ride on it.
    expect(mine.map((l) => l.event)).toEqual(["turn"]);
    const turn = mine[0]!;
    const models = turn.modelCalls as Record<string, unknown>[];
    expect(models.map((l) => l.role)).toEqual(["router", "branch"]);
    for (const m of models) {
      expect(m).toMatchObject({
        outcome: "ok",
        attempts: 1,
        retried: false,
        model: `test-${m.role}`,
      });
      expect(typeof m.latencyMs).toBe("number");
      expect(m).toHaveProperty("promptTokens");
    }
    expect(turn).toMatchObject({
      runId,
      conversationId: id,
      tenantId: "acme",
      system: "clinic",
      status: "completed",
      outcome: "answered",
      level: "info",
      request: { method: "POST", route: "/v1/clinic/threads/:threadId/messages", status: 200, role: "admin" },
    });
    expect(typeof (turn.request as { latencyMs: unknown }).latencyMs).toBe("number");
    // A request without a turn keeps a line of its own.
    lines.length = 0;
    expect((await fetch(`${server.url}/v1/clinic/threads/${id}`, { headers: A })).status).toBe(200);
    await new Promise((res) => setTimeout(res, 20));
    expect(lines.filter((l) => l.event === "request")).toEqual([
      expect.objectContaining({ method: "GET", route: "/v1/clinic/threads/:threadId", status: 200, tenantId: "acme" }),
    ]);

    const after = await scrape();
    const d = (name: string, labels: Record<string, string> = {}) =>
      metricValue(after, name, labels) - metricValue(before, name, labels);
    expect(d("ds_turns_total", { system: "clinic", outcome: "answered" })).toBe(1);
    expect(d("ds_model_calls_total", { role: "router", outcome: "ok" })).toBe(1);
    expect(d("ds_model_calls_total", { role: "branch", outcome: "ok" })).toBe(1);
    expect(d("ds_turn_duration_seconds_count", { system: "clinic" })).toBe(1);
    // Where the turn's time went: each phase once; the stream's phases fit inside the streamed turn
    // (admit comes before it: the request until its run is stored).
    for (const phase of ["admit", "first_token", "commit"])
      expect(d("ds_turn_phase_seconds_count", { system: "clinic", phase }), phase).toBe(1);
    const phase = (p: string) => d("ds_turn_phase_seconds_sum", { system: "clinic", phase: p });
    expect(phase("admit")).toBeGreaterThan(0);
    expect(phase("first_token") + phase("commit")).toBeGreaterThan(0);
    expect(phase("first_token") + phase("commit")).toBeLessThanOrEqual(
      d("ds_turn_duration_seconds_sum", { system: "clinic" }),
    );
    expect(d("ds_model_call_duration_seconds_count", { role: "branch" })).toBe(1);
    // The turn's events reached the client's socket (several may share a write).
    expect(d("ds_sse_writes_total")).toBeGreaterThan(0);
    expect(after).toMatch(/^ds_open_streams\{kind="turn"\} 0$/m);
    expect(metricValue(after, "ds_db_up")).toBe(1);
    expect(metricValue(after, "ds_db_pool_max_connections")).toBeGreaterThan(0);

    const names = spans.map((s) => s.name);
    expect(names.filter((n) => n === "turn")).toHaveLength(1);
    expect(names.filter((n) => n === "model call")).toHaveLength(2);
    expect(names).toContain("commit");
    expect(spans.every((s) => s.ended)).toBe(true);
    expect(spans.find((s) => s.name === "turn")!.attributes).toMatchObject({
      "run.id": runId,
      "turn.outcome": "answered",
    });
  });

  it("a model outage leaves a warn line per failed call and a turn line; secrets never appear", async () => {
    const id = await newThread();
    lines.length = 0;
    llm.reset();
    llm.script("router", { status: 503, echoAuth: true }, { status: 503, echoAuth: true });
    const r = await postSse(`${server.url}/v1/clinic/threads/${id}/messages`, { text: "Какой у вас адрес?" }, A);
    expect((eventsNamed(r, "final")[0] as { events: string[] }).events).toEqual(["model_unavailable"]);
    await new Promise((res) => setTimeout(res, 50));
    const failed = lines.filter((l) => l.event === "model_call" && l.outcome === "model_unavailable");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      level: "warn",
      role: "router",
      attempts: 2,
      retried: true,
      conversationId: id,
      tenantId: "acme",
    });
    expect(String(failed[0]!.error)).toMatch(/503.*incorrect credentials/);
    expect(lines.find((l) => l.event === "turn")).toMatchObject({ outcome: "model_unavailable", conversationId: id });
    expect(raw).not.toContain(SECRET_TOKEN);
    expect(raw).not.toContain(API_KEY);
    expect(raw).not.toContain("Какой у вас адрес"); // no user text in logs
    const m = await scrape();
    expect(metricValue(m, "ds_model_calls_total", { role: "router", outcome: "model_unavailable" })).toBe(1);
    expect(metricValue(m, "ds_errors_total", { where: "model", code: "model_unavailable" })).toBe(1);
  });

  it("/readyz checks the database: 200 when it answers, 503 when it does not", async () => {
    const ok = await fetch(`${server.url}/readyz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: "ready", database: "ok" });
    const app = new Hono();
    const broken = Object.assign(async () => Promise.reject(new Error("connection refused")), {});
    registerObservabilityRoutes(
      app as never,
      { db: { sql: broken, backend: "postgres" }, turns: new ActiveTurns() } as never,
    );
    const down = await app.request("/readyz");
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ database: "unreachable" });
  });
});
