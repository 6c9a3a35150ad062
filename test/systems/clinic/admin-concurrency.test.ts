import { beforeAll, describe, expect, it } from "vitest";
import { onServer } from "../../utils/db";
import { useTestServer, type StartedTestServer } from "../../utils/server";

/**
 * Concurrent admin edits never 500 (issue 18 item 7). On the PostgreSQL server two HTTP servers,
 * each with its own connection pool (two postgres clients, as two processes have), share one
 * database: 20 new versions of one branch at once all succeed with distinct versions, and
 * concurrent uploads, re-indexes and a delete of one KB document each succeed or 404.
 * On PGlite (one connection) the same requests run against one server.
 */
const s = useTestServer();
let servers: StartedTestServer[] = [];

beforeAll(async () => {
  servers = [s.started];
  if (onServer) servers.push(await s.start({ ownPool: true }));
});

const url = (i: number) => servers[i % servers.length]!.url;
const post = (i: number, path: string, body?: unknown) =>
  fetch(`${url(i)}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe(`concurrent admin edits (${onServer ? "PostgreSQL server, two pools" : "PGlite"})`, () => {
  it("20 concurrent new versions of one branch: all 201, versions distinct and consecutive, one active", async () => {
    // The tenant's settings are seeded on first read.
    expect((await fetch(`${url(0)}/v1/clinic/branches`)).status).toBe(200);
    const rs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(i, "/v1/clinic/branches/general_info/versions", {
          config: { system_prompt: `Ты — справочная клиники (правка ${i}).` },
        }),
      ),
    );
    const bodies = await Promise.all(rs.map((r) => r.json() as Promise<{ version: number }>));
    expect(rs.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(bodies.map((b) => b.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    const versions = (await (await fetch(`${url(0)}/v1/clinic/branches/general_info/versions`)).json()) as {
      versions: { version: number; active: boolean }[];
    };
    expect(versions.versions.filter((v) => v.active)).toHaveLength(1);
  });

  it("concurrent step-graph versions, branch versions and activations interleaved: never a 500", async () => {
    const steps = (await (await fetch(`${url(0)}/v1/clinic/branches/new_booking/steps/versions`)).json()) as {
      versions: { version: number; graph: Record<string, unknown> }[];
    };
    const graph = steps.versions[0]!.graph;
    const rs = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        [
          () => post(i, "/v1/clinic/branches/new_booking/steps", { graph, activate: i % 2 === 0 }),
          () => post(i, "/v1/clinic/branches/new_booking/steps/versions/1/activate"),
          () => post(i, "/v1/clinic/branches/general_info/versions", { config: {}, activate: i % 2 === 0 }),
          () => post(i, "/v1/clinic/branches/general_info/versions/1/activate"),
        ][i % 4]!(),
      ),
    );
    for (const r of rs) expect(r.status, await r.clone().text()).toBeLessThan(300);
    const after = (await (await fetch(`${url(0)}/v1/clinic/branches/new_booking/steps/versions`)).json()) as {
      versions: { version: number; active: boolean }[];
    };
    expect(after.versions.map((v) => v.version)).toEqual(
      Array.from({ length: after.versions.length }, (_, i) => i + 1),
    );
    expect(after.versions.filter((v) => v.active)).toHaveLength(1);
  });

  it("uploads, re-indexes and a full re-index of one KB document at once: each succeeds and the document keeps its chunks", async () => {
    const text = (i: number) => `## Часы работы\nКлиника открыта с 9 до ${10 + i}.\n\n## Адрес\nУлица ${i}, дом 1.`;
    expect((await post(0, "/v1/clinic/kb/documents", { id: "hours", title: "Часы", text: text(0) })).status).toBe(201);
    const rs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 3 === 0
          ? post(i, "/v1/clinic/kb/documents", { id: "hours", title: "Часы", text: text(i) })
          : i % 3 === 1
            ? post(i, "/v1/clinic/kb/documents/hours/reindex")
            : post(i, "/v1/clinic/kb/reindex"),
      ),
    );
    for (const r of rs) expect(r.status, await r.clone().text()).toBeLessThan(300);
    const doc = (await (await fetch(`${url(0)}/v1/clinic/kb/documents/hours`)).json()) as { chunkCount: number };
    expect(doc.chunkCount).toBeGreaterThan(0);
  });

  it("a delete racing re-indexes of the same document: 204 once, the rest 200 or 404", async () => {
    expect(
      (await post(0, "/v1/clinic/kb/documents", { id: "gone", title: "Удаляемый", text: "## Раздел\nТекст раздела." }))
        .status,
    ).toBe(201);
    const rs = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => post(i, "/v1/clinic/kb/documents/gone/reindex")),
      fetch(`${url(1)}/v1/clinic/kb/documents/gone`, { method: "DELETE" }),
      ...Array.from({ length: 9 }, (_, i) => post(i + 1, "/v1/clinic/kb/documents/gone/reindex")),
    ]);
    const statuses = rs.map((r) => r.status);
    expect(statuses.filter((s) => s === 204)).toHaveLength(1);
    expect(statuses.every((s) => s === 200 || s === 204 || s === 404)).toBe(true);
  });
});
