import { beforeAll, describe, expect, it } from "vitest";
import { runMigrations } from "../../../storage/migrate";
import { DEMO_DOCUMENTS, loadDemoKnowledgeBase } from "../../../systems/clinic/demo-kb";
import { clinicApi } from "../../utils/clinic-api";
import { createTestDatabase } from "../../utils/db";
import { useTestServer } from "../../utils/server";

const server = useTestServer();
let api: ReturnType<typeof clinicApi>;

beforeAll(async () => {
  api = clinicApi(server.url, "");
});

const ask = async (text: string) => api.final(await api.say(await api.newThread(), text)).reply;

describe("the demo knowledge base of a fresh install", () => {
  it("answers the README's questions offline, from demo documents marked as such", async () => {
    expect(await loadDemoKnowledgeBase(server.db.sql)).toBe(DEMO_DOCUMENTS.length);
    const address = await ask("Какой у вас адрес?");
    expect(address).toContain("ул. Примерная");
    expect(address).toContain("Демонстрационные данные");
    expect(await ask("Во сколько вы открываетесь?")).toMatch(/8:00/);
    expect(await ask("Сколько стоит приём терапевта?")).toMatch(/2 500 руб/);
    const docs = await api.json<{ documents: { id: string; title: string }[] }>(api.api("/v1/clinic/kb/documents"));
    expect(docs.documents.filter((d) => d.id.startsWith("demo-")).every((d) => d.title.startsWith("Демо"))).toBe(true);
  });

  it("is removed by DELETE /v1/clinic/kb/demo, leaving the tenant's own documents", async () => {
    await api.post("/v1/clinic/kb/documents", { id: "own-doc", title: "Наш адрес", text: "Мы на Ленина, 1." });
    const r = await api.api("/v1/clinic/kb/demo", { method: "DELETE" });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ documents: DEMO_DOCUMENTS.length });
    const ids = (await api.json<{ documents: { id: string }[] }>(api.api("/v1/clinic/kb/documents"))).documents.map(
      (d) => d.id,
    );
    expect(ids).toContain("own-doc");
    expect(ids.some((id) => id.startsWith("demo-"))).toBe(false);
    expect(await ask("Какой у вас адрес?")).not.toContain("Примерная");
    // And loads again on request (Settings' button).
    const again = await api.post("/v1/clinic/kb/demo");
    expect(again.status).toBe(201);
    expect(await ask("Какой у вас адрес?")).toContain("Примерная");
  });
});

describe("a fresh database", () => {
  it("is marked fresh only when this open created its schema", { timeout: 120_000 }, async () => {
    const fresh = await createTestDatabase();
    try {
      expect(fresh.db.fresh).toBe(true);
      expect(await runMigrations(fresh.db.sql)).toEqual([]);
    } finally {
      await fresh.drop();
    }
  });
});
