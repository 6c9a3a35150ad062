import { rm } from "node:fs/promises";
import { join } from "node:path";
import { Hono } from "hono";
import { z } from "zod";
import { AppError } from "../../driver/errors";
import {
  eraseConversation,
  findInboxItem,
  InboxFilter,
  listInbox,
  setHandling,
  BadCursor,
  type InboxFilter as Filter,
} from "../../storage/inbox";
import { listMessages } from "../../storage/messages";
import type { AuthEnv } from "../auth";
import type { Deps } from "../deps";
import { describeZod, readJson } from "../errors";

/**
 * The operators' inbox (issue 17 item 1): every system's conversations in one list, one
 * conversation with its transcript, take / release / close, and erasure. Operator routes: all
 * under /v1/inbox/, plus the per-system lists (GET /v1/clinic/threads, /v1/workbench/conversations,
 * /v1/evidence/conversations), so a role rule can cover them by path.
 */

const TakeBody = z.object({ operator: z.string().trim().min(1).max(100).optional() });

function parseFilter(query: Record<string, string>, system?: Filter["system"]): Filter {
  const parsed = InboxFilter.safeParse({ ...query, ...(system ? { system } : {}) });
  if (!parsed.success) throw new AppError("invalid_request", describeZod(parsed.error), parsed.error.issues);
  return parsed.data;
}

export function inboxRoutes(deps: Deps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const sql = deps.db.sql;
  /** The inbox hooks of the system a conversation belongs to (driver/system.ts). */
  const inboxOf = (system: string) => deps.systems.find((s) => s.name === system)?.inbox;
  const list = async (tenantId: string, f: Filter) => {
    try {
      return await listInbox(sql, tenantId, f);
    } catch (e) {
      if (e instanceof BadCursor)
        throw new AppError("invalid_request", "Курсор не распознан: начните список заново без cursor.");
      throw e;
    }
  };
  const item = async (tenantId: string, id: string) => {
    const found = await findInboxItem(sql, tenantId, id);
    if (!found) throw new AppError("not_found", "Такого диалога нет.");
    return found;
  };

  app.get("/v1/inbox/conversations", async (c) => c.json(await list(c.get("tenantId"), parseFilter(c.req.query()))));
  app.get("/v1/clinic/threads", async (c) =>
    c.json(await list(c.get("tenantId"), parseFilter(c.req.query(), "clinic"))),
  );
  app.get("/v1/workbench/conversations", async (c) =>
    c.json(await list(c.get("tenantId"), parseFilter(c.req.query(), "workbench"))),
  );
  app.get("/v1/evidence/conversations", async (c) =>
    c.json(await list(c.get("tenantId"), parseFilter(c.req.query(), "evidence"))),
  );

  app.get("/v1/inbox/conversations/:id", async (c) => {
    const conv = await item(c.get("tenantId"), c.req.param("id"));
    const messages = await listMessages(sql, conv.id);
    const hooks = inboxOf(conv.system);
    const metas = hooks?.messagesMeta ? await hooks.messagesMeta(sql, conv.id, messages) : messages.map((m) => m.meta);
    return c.json({
      ...conv,
      ...(hooks ? { state: await hooks.state(sql, conv.id) } : {}),
      messages: messages.map((m, i) => ({
        seq: m.seq,
        role: m.role,
        text: m.text,
        meta: m.runId ? { ...metas[i], runId: m.runId } : metas[i],
        createdAt: m.createdAt.toISOString(),
      })),
    });
  });

  /** The operator has the thread: the bot only holds (systems/clinic/hold.ts) until release. */
  app.post("/v1/inbox/conversations/:id/take", async (c) => {
    const tenantId = c.get("tenantId");
    const conv = await item(tenantId, c.req.param("id"));
    const body = await readJson(c, TakeBody);
    if (conv.system !== "clinic") throw new AppError("conflict", "Взять можно только диалог пациента клиники.");
    await setHandling(sql, tenantId, conv.id, { status: "taken", takenBy: body.operator ?? "оператор" });
    return c.json(await item(tenantId, conv.id));
  });

  /** Back to the bot: the escalation ends (the dialogue machine is given operator.release). */
  app.post("/v1/inbox/conversations/:id/release", async (c) => {
    const tenantId = c.get("tenantId");
    const conv = await item(tenantId, c.req.param("id"));
    if (conv.status !== "taken" && !conv.escalated)
      throw new AppError("conflict", "Диалог не у оператора: освобождать нечего.");
    await releaseMachine(tenantId, conv.id, conv.system);
    await setHandling(sql, tenantId, conv.id, { status: "open", clearEscalation: true });
    return c.json(await item(tenantId, conv.id));
  });

  /** Done with it: no longer waiting; a new patient message opens it again. */
  app.post("/v1/inbox/conversations/:id/close", async (c) => {
    const tenantId = c.get("tenantId");
    const conv = await item(tenantId, c.req.param("id"));
    await releaseMachine(tenantId, conv.id, conv.system);
    await setHandling(sql, tenantId, conv.id, { status: "closed", clearEscalation: true });
    return c.json(await item(tenantId, conv.id));
  });

  /** The right to erasure: the conversation and every row of it, and its AI_DEBUG files. */
  app.delete("/v1/inbox/conversations/:id", async (c) => {
    const r = await eraseConversation(sql, c.get("tenantId"), c.req.param("id"));
    if (r.result === "not_found") throw new AppError("not_found", "Такого диалога нет.");
    if (r.result === "running")
      throw new AppError("conflict", "Сейчас идёт ход этого диалога; удалите его после ответа.");
    await Promise.all(
      r.runIds.map((id) => rm(join(deps.config.debugDir, id), { recursive: true, force: true }).catch(() => {})),
    );
    return c.body(null, 204);
  });
  return app;

  async function releaseMachine(tenantId: string, id: string, system: string): Promise<void> {
    await inboxOf(system)?.release(sql, tenantId, id);
  }
}
