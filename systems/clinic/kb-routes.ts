import { Hono } from "hono";
import { AppError } from "../../driver/errors";
import { getDocument } from "./store/kb";
import { listChunks } from "./store/kb-chunks";
import type { AuthEnv } from "../../http/auth";
import type { Deps } from "../../http/deps";

/**
 * What the clinic's knowledge-base routes do not offer and the Отладка page needs: a
 * document's chunks exactly as indexed (upload, re-index and search are in admin-routes.ts).
 */
export function clinicKbChunkRoutes(deps: Deps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.get("/v1/clinic/kb/documents/:id/chunks", async (c) => {
    const tenantId = c.get("tenantId");
    const doc = await getDocument(deps.db.sql, tenantId, c.req.param("id"));
    if (!doc) throw new AppError("not_found", "Такого документа нет.");
    return c.json({
      documentId: doc.id,
      version: doc.version,
      chunks: await listChunks(deps.db.sql, tenantId, doc.id),
    });
  });
  return app;
}
