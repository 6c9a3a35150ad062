import { describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { eventsNamed, postSse } from "../utils/sse";

/** Operator routes over real HTTP: pages, diagrams with a conversation highlighted, KB chunks, OpenAPI. */

const A = { authorization: "Bearer tok-a" };
const B = { authorization: "Bearer tok-b" };

const server = useTestServer({ llm: true, tokens: "a:tok-a,b:tok-b" });
const llm = server.llm;

const get = (path: string, headers: Record<string, string> = A) => fetch(`${server.url}${path}`, { headers });

async function clinicTurn(text: string, router: string, branch: string) {
  const { threadId } = (await (
    await fetch(`${server.url}/v1/clinic/threads`, { method: "POST", headers: A })
  ).json()) as { threadId: string };
  llm.script("router", router);
  llm.script("branch", branch);
  const r = await postSse(`${server.url}/v1/clinic/threads/${threadId}/messages`, { text }, A);
  expect(eventsNamed(r, "final")).toHaveLength(1);
  return threadId;
}

describe("operator pages", () => {
  it("serves every page and asset without a token, with their types; Отладка is the root", async () => {
    for (const page of [
      "/",
      "/sandbox.html",
      "/settings.html",
      "/workbench.html",
      "/machines.html",
      "/api.html",
      "/docs.html",
      "/inspector.html",
    ]) {
      const r = await fetch(`${server.url}${page}`);
      expect(r.status, page).toBe(200);
      expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const html = await r.text();
      expect(html).toContain('<html lang="ru">');
      for (const m of html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g))
        expect((await fetch(`${server.url}${m[1]}`)).status, m[1]).toBe(200);
    }
    expect(await (await fetch(`${server.url}/`)).text()).toContain("<title>Chat Agent for Patients — Отладка</title>");
    const js = await fetch(`${server.url}/assets/common.js`);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
  });

  it("answers an unknown page or a path outside the folder with the JSON 404", async () => {
    for (const path of [
      "/nope.html",
      "/assets/nope.js",
      "/assets/..%2Fsandbox.html",
      "/%2e%2e/package.json",
      "/assets/app.css.map",
    ]) {
      const r = await fetch(`${server.url}${path}`);
      expect(r.status, path).toBe(404);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe("not_found");
    }
  });
});

describe("machine diagrams", () => {
  it("lists the machines, the clinic's generated from the tenant's settings", async () => {
    const { machines } = (await (await get("/v1/machines")).json()) as {
      machines: { id: string; states: number; conversationKind: string }[];
    };
    expect(machines.map((m) => m.id)).toEqual([
      "clinic-dialogue",
      "steps-new_booking",
      "interaction",
      "evidence-conversation",
    ]);
    expect(machines.find((m) => m.id === "steps-new_booking")!.states).toBe(6);
    expect((await get("/v1/machines", {})).status).toBe(401);
  });

  it("highlights where a thread stands: the step machine at the thread's step, the dialogue between turns", async () => {
    const threadId = await clinicTurn(
      "Хочу записаться, я Алексей",
      "new_booking",
      'Алексей, что беспокоит?\nSTATE_JSON: {"state_after": "qualify", "slots_updated": {"name": "Алексей"}}',
    );
    const svg = await get(`/v1/machines/steps-new_booking/diagram?conversationId=${threadId}`);
    expect(svg.headers.get("content-type")).toBe("image/svg+xml; charset=utf-8");
    const text = await svg.text();
    expect([...text.matchAll(/data-state="([^"]+)" data-active="true"/g)].map((m) => m[1])).toEqual([
      "steps.new_booking.v1.qualify",
    ]);
    expect(text).toContain("активная ветка new_booking, шаг qualify");

    const json = (await (
      await get(`/v1/machines/clinic-dialogue/diagram?conversationId=${threadId}&format=json`)
    ).json()) as { active: string[]; caption: string; transitions: unknown[] };
    expect([...json.active].sort()).toEqual([
      "clinicDialogue",
      "clinicDialogue.handler",
      "clinicDialogue.handler.bot",
      "clinicDialogue.patient",
      "clinicDialogue.patient.new_booking",
      "clinicDialogue.patient.new_booking.qualify",
      "clinicDialogue.turn",
      "clinicDialogue.turn.idle",
    ]);
    expect(json.caption).toContain("ветка new_booking, шаг qualify");
    expect(json.transitions.length).toBeGreaterThan(5);

    const html = await get(`/v1/machines/steps-new_booking/diagram?conversationId=${threadId}&format=html`);
    expect(html.headers.get("content-type")).toContain("text/html");
    expect(await html.text()).toContain("<svg");
  });

  it("without a conversation draws the definition; refuses another tenant's thread, a wrong kind, an unknown machine", async () => {
    const plain = await (await get("/v1/machines/interaction/diagram")).text();
    expect(plain).not.toContain("data-active");
    expect(plain).toContain("определение машины");
    const threadId = await clinicTurn("Сколько стоит приём?", "price_question", "Приём стоит 2500 ₽.");
    expect((await get(`/v1/machines/steps-new_booking/diagram?conversationId=${threadId}`, B)).status).toBe(404);
    const notHere = await (await get(`/v1/machines/steps-new_booking/diagram?conversationId=${threadId}`)).text();
    expect(notHere).toContain("сейчас не в этой машине");
    expect(notHere).not.toContain("data-active");
    const wrongKind = await get(`/v1/machines/interaction/diagram?conversationId=${threadId}`);
    expect(wrongKind.status).toBe(400);
    expect(((await wrongKind.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    expect((await get("/v1/machines/nope/diagram")).status).toBe(404);
    expect((await get("/v1/machines/interaction/diagram?format=png")).status).toBe(400);
  });
});

describe("knowledge base chunks and the Workbench sample", () => {
  it("lists a document's chunks as indexed, tenant-scoped", async () => {
    const up = await fetch(`${server.url}/v1/clinic/kb/documents`, {
      method: "POST",
      headers: { ...A, "content-type": "application/json" },
      body: JSON.stringify({
        id: "prices",
        title: "Цены",
        text: "# ЛОР\n\nПриём ЛОРа — 2500 рублей.\n\n# Терапевт\n\nПриём терапевта — 2000 рублей.",
      }),
    });
    expect(up.status).toBe(201);
    const r = (await (await get("/v1/clinic/kb/documents/prices/chunks")).json()) as {
      version: number;
      chunks: { ord: number; heading: string; text: string }[];
    };
    expect(r.version).toBe(1);
    expect(r.chunks.map((c) => [c.ord, c.heading])).toEqual([
      [0, "ЛОР"],
      [1, "Терапевт"],
    ]);
    expect(r.chunks[1]!.text).toBe("Приём терапевта — 2000 рублей.");
    expect((await get("/v1/clinic/kb/documents/prices/chunks", B)).status).toBe(404);
  });

  it("serves the sample workspace, or says it has none", async () => {
    const r = await get("/v1/workbench/sample-workspace");
    if (r.status === 200) expect(Array.isArray(((await r.json()) as { documents: unknown[] }).documents)).toBe(true);
    else expect(((await r.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });
});

describe("OpenAPI", () => {
  it("is generated from the zod schemas and lists every /v1 route the server has", async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<
        string,
        Record<
          string,
          {
            requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
            "x-undocumented"?: boolean;
          }
        >
      >;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(doc.openapi).toBe("3.1.0");
    const routes = await (await import("../../http/app")).createApp(server.deps).routes;
    for (const r of routes.filter((x) => x.path.startsWith("/v1/") && x.method !== "ALL")) {
      const path = r.path.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}");
      expect(doc.paths[path]?.[r.method.toLowerCase()], `${r.method} ${path}`).toBeDefined();
    }
    // Every operation documented by hand still exists on the server (no stale entries).
    const served = new Set(
      routes.map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}")}`),
    );
    for (const [path, ops] of Object.entries(doc.paths))
      for (const m of Object.keys(ops))
        expect(served.has(`${m} ${path}`) || served.has(`all ${path}`), `${m} ${path}`).toBe(true);
    // The clinic message body is the zod schema's JSON Schema; ClinicState is a component.
    const body =
      doc.paths["/v1/clinic/threads/{threadId}/messages"]!.post!.requestBody!.content["application/json"]!.schema;
    expect(Object.keys(body.properties)).toEqual(["text", "debug"]);
    expect(Object.keys(doc.components.schemas.ClinicState!.properties!)).toEqual([
      "activeBranch",
      "routerDecision",
      "step",
      "slots",
      "handoffCount",
      "softInsertionCount",
      "suspended",
      "escalationReason",
    ]);
  });
});
