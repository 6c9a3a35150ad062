import { Hono } from "hono";
import { chunkDocument } from "./kb-chunk";
import { loadDemoKnowledgeBase, removeDemoKnowledgeBase } from "./demo-kb";
import { BranchConfig, BranchCode, ROUTER_CODE, RouterConfig, StepGraph } from "./types";
import { loadRegistry } from "./registry-load";
import { AppError } from "../../driver/errors";
import {
  activateBranchVersion,
  activateStepGraphVersion,
  insertBranchVersion,
  insertStepGraphVersion,
  listBranchVersions,
  listStepGraphVersions,
} from "./store/branches";
import { deleteDocument, getDocument, listDocuments, replaceChunks, searchChunks, upsertDocument } from "./store/kb";
import type { AuthEnv } from "../../http/auth";
import type { Deps } from "../../http/deps";
import { describeZod, readJson, readQuery } from "../../http/errors";
import { KbDocumentBody, KbSearchQuery, NewBranchVersion, NewStepGraph } from "./contract";

/**
 * Clinic settings (versioned branches and step graphs) and the knowledge base — the
 * "Настройки" and "Отладка" screens of seed 003, as JSON endpoints.
 */

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9а-яё]+/gi, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64) || "doc";

/** A branch code, or the router's system branch `_router` (versioned like a branch, but only {title, system_prompt}). */
const settingsCode = (raw: string): BranchCode | typeof ROUTER_CODE => (raw === ROUTER_CODE ? ROUTER_CODE : code(raw));

const code = (raw: string) => {
  const r = BranchCode.safeParse(raw);
  if (!r.success) throw new AppError("not_found", `Нет ветки ${raw}.`);
  return r.data;
};

/** Mounted by the clinic's sub-app (routes.ts). */
/** A version in a path: a positive integer the column holds, else a clear 400 (never NaN in SQL). */
function versionParam(raw: string): number {
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1)
    throw new AppError("invalid_request", `Версия в адресе — целое число от 1, а не «${raw.slice(0, 40)}».`);
  return Number(raw);
}

export function clinicAdminRoutes(deps: Deps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const sql = deps.db.sql;

  app.get("/v1/clinic/branches", async (c) => {
    const { registry, versions } = await loadRegistry(sql, c.get("tenantId"));
    return c.json({
      versions,
      branches: Object.values(registry.branches),
      stepGraphs: Object.values(registry.stepGraphs),
      router: registry.router,
    });
  });

  app.get("/v1/clinic/branches/:code/versions", async (c) => {
    await loadRegistry(sql, c.get("tenantId"));
    return c.json({ versions: await listBranchVersions(sql, c.get("tenantId"), settingsCode(c.req.param("code"))) });
  });

  /** A new version of a branch's settings; active at once unless `activate: false`. */
  app.post("/v1/clinic/branches/:code/versions", async (c) => {
    const tenantId = c.get("tenantId");
    const branch = settingsCode(c.req.param("code"));
    const body = await readJson(c, NewBranchVersion);
    const { registry } = await loadRegistry(sql, tenantId);
    if (branch === ROUTER_CODE) {
      const parsed = RouterConfig.safeParse({ ...registry.router, ...body.config, code: ROUTER_CODE, version: 1 });
      if (!parsed.success) throw new AppError("invalid_request", describeZod(parsed.error));
      const version = await sql.begin((tx) =>
        insertBranchVersion(
          tx,
          tenantId,
          ROUTER_CODE,
          { title: parsed.data.title, system_prompt: parsed.data.system_prompt },
          body.activate,
        ),
      );
      return c.json({ code: branch, version, active: body.activate }, 201);
    }
    const { code: _c, version: _v, ...current } = registry.branches[branch];
    const parsed = BranchConfig.safeParse({ ...current, ...body.config, code: branch, version: 1 });
    if (!parsed.success) throw new AppError("invalid_request", describeZod(parsed.error));
    const { code: _pc, version: _pv, ...config } = parsed.data;
    const version = await sql.begin((tx) => insertBranchVersion(tx, tenantId, branch, config, body.activate));
    return c.json({ code: branch, version, active: body.activate }, 201);
  });

  app.post("/v1/clinic/branches/:code/versions/:version/activate", async (c) => {
    const tenantId = c.get("tenantId");
    const branch = settingsCode(c.req.param("code"));
    const version = versionParam(c.req.param("version"));
    const ok = await sql.begin((tx) => activateBranchVersion(tx, tenantId, branch, version));
    if (!ok) throw new AppError("not_found", "Такой версии нет.");
    return c.json({ code: branch, version, active: true });
  });

  app.get("/v1/clinic/branches/:code/steps/versions", async (c) => {
    await loadRegistry(sql, c.get("tenantId"));
    return c.json({ versions: await listStepGraphVersions(sql, c.get("tenantId"), code(c.req.param("code"))) });
  });

  /** A new step graph for a branch (the dialogue machine is regenerated from it on the next turn). */
  app.post("/v1/clinic/branches/:code/steps", async (c) => {
    const tenantId = c.get("tenantId");
    const branch = code(c.req.param("code"));
    const body = await readJson(c, NewStepGraph);
    const parsed = StepGraph.safeParse({ ...body.graph, branch, version: 1 });
    if (!parsed.success) throw new AppError("invalid_request", describeZod(parsed.error));
    await loadRegistry(sql, tenantId);
    const { branch: _b, version: _v, ...graph } = parsed.data;
    const version = await sql.begin((tx) => insertStepGraphVersion(tx, tenantId, branch, graph, body.activate));
    return c.json({ branch, version, active: body.activate }, 201);
  });

  app.post("/v1/clinic/branches/:code/steps/versions/:version/activate", async (c) => {
    const tenantId = c.get("tenantId");
    const branch = code(c.req.param("code"));
    const version = versionParam(c.req.param("version"));
    const ok = await sql.begin((tx) => activateStepGraphVersion(tx, tenantId, branch, version));
    if (!ok) throw new AppError("not_found", "Такой версии нет.");
    return c.json({ branch, version, active: true });
  });

  // ---- knowledge base ----

  app.get("/v1/clinic/kb/documents", async (c) => {
    const docs = await listDocuments(sql, c.get("tenantId"));
    return c.json({ documents: docs.map(({ body: _b, ...d }) => d) });
  });

  app.get("/v1/clinic/kb/documents/:id", async (c) => {
    const d = await getDocument(sql, c.get("tenantId"), c.req.param("id"));
    if (!d) throw new AppError("not_found", "Такого документа нет.");
    return c.json(d);
  });

  /** Upload (or replace) a document; it is chunked and indexed in the same transaction. */
  app.post("/v1/clinic/kb/documents", async (c) => {
    const tenantId = c.get("tenantId");
    const body = await readJson(c, KbDocumentBody);
    const id = body.id ?? slug(body.title);
    const chunks = chunkDocument(body.title, body.text);
    const version = await sql.begin(async (tx) => {
      const v = await upsertDocument(tx, tenantId, {
        id,
        title: body.title,
        body: body.text,
        branch: body.branch ?? null,
      });
      await replaceChunks(tx, tenantId, id, chunks);
      return v;
    });
    return c.json({ documentId: id, version, chunks: chunks.length }, 201);
  });

  /** Re-index: rebuild a document's chunks from its stored text (e.g. after the chunker changed). */
  app.post("/v1/clinic/kb/documents/:id/reindex", async (c) => {
    const tenantId = c.get("tenantId");
    const d = await getDocument(sql, tenantId, c.req.param("id"));
    if (!d) throw new AppError("not_found", "Такого документа нет.");
    const chunks = chunkDocument(d.title, d.body);
    if (!(await sql.begin((tx) => replaceChunks(tx, tenantId, d.id, chunks))))
      throw new AppError("not_found", "Такого документа нет.");
    return c.json({ documentId: d.id, version: d.version, chunks: chunks.length });
  });

  app.post("/v1/clinic/kb/reindex", async (c) => {
    const tenantId = c.get("tenantId");
    const docs = await listDocuments(sql, tenantId);
    let total = 0;
    await sql.begin(async (tx) => {
      for (const d of docs) {
        const chunks = chunkDocument(d.title, d.body);
        total += chunks.length;
        await replaceChunks(tx, tenantId, d.id, chunks);
      }
    });
    return c.json({ documents: docs.length, chunks: total });
  });

  app.delete("/v1/clinic/kb/documents/:id", async (c) => {
    if (!(await deleteDocument(sql, c.get("tenantId"), c.req.param("id"))))
      throw new AppError("not_found", "Такого документа нет.");
    return c.body(null, 204);
  });

  /** The demo documents of a fresh install (demo-kb.ts): removable in one call, loadable again. */
  app.delete("/v1/clinic/kb/demo", async (c) =>
    c.json({ documents: await removeDemoKnowledgeBase(sql, c.get("tenantId")) }),
  );
  app.post("/v1/clinic/kb/demo", async (c) =>
    c.json({ documents: await loadDemoKnowledgeBase(sql, c.get("tenantId")) }, 201),
  );

  /** A single test question without dialogue memory: which fragments would a branch get. */
  app.get("/v1/clinic/kb/search", async (c) => {
    const { q, branch, limit } = readQuery(c, KbSearchQuery);
    const fragments = await searchChunks(sql, c.get("tenantId"), q, { branch: branch ? code(branch) : null, limit });
    return c.json({ query: q, fragments });
  });
  return app;
}
