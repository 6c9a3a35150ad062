import { Hono, type Context } from "hono";
import { AppError } from "../../driver/errors";
import { findInboxItem } from "../../storage/inbox";
import { addNote, listNotes } from "../../storage/notes";
import {
  createQuickReply,
  deleteQuickReply,
  DuplicateTitle,
  listQuickReplies,
  updateQuickReply,
} from "../../storage/quick-replies";
import { activeReminders } from "../../storage/reminders";
import { NoteBody, PresenceBody, QuickReplyBody } from "../../contract/inbox-tools";
import type { AuthEnv } from "../auth";
import type { Deps } from "../deps";
import { readJson } from "../errors";
import { operatorOf } from "../operator-identity";
import { presenceOf } from "../presence";
import { SseWriter } from "../sse-writer";
import { sseResponse } from "../sse-response";

/**
 * The operator's desk around the inbox (issue 43 item 4): quick replies, internal notes,
 * presence and reminders. Operator routes (http/roles.ts lists none of them for `chat`).
 */

/**
 * Who the operator is, for a note or a presence signal: the token's person when API_TOKENS binds
 * one, else the body's name (an integration), as the inbox's other actions read it.
 */
export function deskOperator(c: Context<AuthEnv>, named: string | undefined): string {
  return operatorOf(c, named).name;
}

const DUPLICATE = (title: string) =>
  new AppError("conflict", `Быстрый ответ «${title}» уже есть: выберите другое название.`, {
    reason: "duplicate_title",
  });

export function inboxToolRoutes(deps: Deps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const sql = deps.db.sql;
  const board = presenceOf(deps);
  const conversation = async (tenantId: string, id: string) => {
    const found = await findInboxItem(sql, tenantId, id);
    if (!found) throw new AppError("not_found", "Такого диалога нет.");
    return found;
  };

  // ---- quick replies ----
  app.get("/v1/inbox/quick-replies", async (c) => c.json({ items: await listQuickReplies(sql, c.get("tenantId")) }));
  app.post("/v1/inbox/quick-replies", async (c) => {
    const body = await readJson(c, QuickReplyBody);
    try {
      return c.json(await createQuickReply(sql, c.get("tenantId"), body), 201);
    } catch (e) {
      if (e instanceof DuplicateTitle) throw DUPLICATE(body.title);
      throw e;
    }
  });
  app.put("/v1/inbox/quick-replies/:id", async (c) => {
    const body = await readJson(c, QuickReplyBody);
    let updated;
    try {
      updated = await updateQuickReply(sql, c.get("tenantId"), c.req.param("id"), body);
    } catch (e) {
      if (e instanceof DuplicateTitle) throw DUPLICATE(body.title);
      throw e;
    }
    if (!updated) throw new AppError("not_found", "Такого быстрого ответа нет.");
    return c.json(updated);
  });
  app.delete("/v1/inbox/quick-replies/:id", async (c) => {
    if (!(await deleteQuickReply(sql, c.get("tenantId"), c.req.param("id"))))
      throw new AppError("not_found", "Такого быстрого ответа нет.");
    return c.body(null, 204);
  });

  // ---- internal notes: their own table, so neither the transcript nor a prompt nor the patient's stream sees one ----
  app.get("/v1/inbox/conversations/:id/notes", async (c) => {
    const conv = await conversation(c.get("tenantId"), c.req.param("id"));
    return c.json({ items: await listNotes(sql, conv.id) });
  });
  app.post("/v1/inbox/conversations/:id/notes", async (c) => {
    const tenantId = c.get("tenantId");
    const conv = await conversation(tenantId, c.req.param("id"));
    const body = await readJson(c, NoteBody);
    const note = await addNote(sql, conv.id, { author: deskOperator(c, body.operator), text: body.text });
    // Other operators' pages hear of it (ids only: the text stays behind the notes route).
    board.announce({ tenantId, event: "note", data: { conversationId: conv.id, id: note.id, author: note.author } });
    return c.json(note, 201);
  });

  // ---- presence: ephemeral, fanned out live, never stored ----
  app.post("/v1/inbox/conversations/:id/presence", async (c) => {
    const tenantId = c.get("tenantId");
    const conv = await conversation(tenantId, c.req.param("id"));
    const body = await readJson(c, PresenceBody);
    return c.json(board.beat(tenantId, conv.id, deskOperator(c, body.operator), body.state));
  });
  app.get("/v1/inbox/presence", (c) => {
    const tenantId = c.get("tenantId");
    return sseResponse(c, async (stream) => {
      const writer = new SseWriter(stream);
      writer.sendEphemeral("presence.snapshot", { items: board.all(tenantId) });
      await new Promise<void>((done) => {
        const off = board.subscribe((n) => {
          if (n.tenantId === tenantId) writer.sendEphemeral(n.event, n.data);
        });
        stream.onAbort(() => {
          off();
          done();
        });
        // Server shutdown: Started.stop closes every connection, which aborts the stream.
      });
      writer.close();
    });
  });

  // ---- reminders ----
  app.get("/v1/inbox/reminders", async (c) => c.json({ items: await activeReminders(sql, c.get("tenantId")) }));
  return app;
}
