import { ANY_ACCESS } from "../../storage/conversation-credentials";
import type { Hono } from "hono";
import { z } from "zod";
import { AppError } from "../../driver/errors";
import { runTurn } from "../../driver/turn";
import type { AuthEnv } from "../../http/auth";
import type { Deps } from "../../http/deps";
import { readJson } from "../../http/errors";
import type { EventsOf, runEvents } from "../../http/contract";
import { streamRun } from "../../http/sse";
import { createConversation, findConversation } from "../../storage/conversations";
import { appendMessages, listMessages } from "../../storage/messages";
import { counterSpec } from "./counter-machine";

// Built once: a zod 4 schema compiles its parser on first use, per instance.
const MessageBody = z.object({ text: z.string().min(1).max(10_000), debug: z.boolean().optional() });

/**
 * A minimal dialogue served the way the real systems are: SSE turn through the driver,
 * the answer streamed by the ANSWER role. Foundation tests exercise the gateway with it.
 */
export function registerTestRoutes(app: Hono<AuthEnv>, deps: Deps): void {
  app.post("/v1/test/conversations", async (c) => {
    const conv = await createConversation(deps.db.sql, c.get("tenantId"), "test");
    return c.json({ conversationId: conv.id }, 201);
  });
  app.get("/v1/test/conversations/:id", async (c) => {
    const conv = await findConversation(deps.db.sql, c.get("tenantId"), c.req.param("id"), "test", ANY_ACCESS);
    if (!conv) throw new AppError("not_found", "Диалог не найден.");
    return c.json({ conversationId: conv.id, messages: await listMessages(deps.db.sql, conv.id) });
  });
  app.post("/v1/test/conversations/:id/messages", async (c) => {
    const body = await readJson(c, MessageBody);
    const conv = await findConversation(deps.db.sql, c.get("tenantId"), c.req.param("id"), "test", ANY_ACCESS);
    if (!conv) throw new AppError("not_found", "Диалог не найден.");
    return streamRun<EventsOf<typeof runEvents> & { final: { answer: string | null; turns: number } }>(c, deps, {
      conversationId: conv.id,
      tenantId: conv.tenantId,
      kind: "test",
      debug: body.debug,
      work: async (run) => {
        await runTurn({
          sql: deps.db.sql,
          run,
          spec: counterSpec,
          key: conv.id,
          conversationId: conv.id,
          events: [{ type: "user.message", text: body.text }],
          log: {},
          effects: {
            "effect.model": async (e) => {
              const r = await deps.llm.stream("answer", [{ role: "user", content: String(e.prompt) }], {
                signal: run.signal,
                onDelta: (delta) => run.emit("token", { delta }),
              });
              if (!r.ok)
                throw new AppError(
                  r.error.code === "cancelled" ? "internal" : "model_unavailable",
                  "Модель временно недоступна.",
                );
              return { type: "model.replied", text: r.value };
            },
          },
          commit: async (tx, s) => {
            await appendMessages(
              tx,
              conv.id,
              [
                { role: "user", text: body.text },
                { role: "assistant", text: s.context.last ?? "" },
              ],
              run.id,
            );
          },
          closing: (s) => [{ event: "final", data: { answer: s.context.last, turns: s.context.turns } }],
        });
      },
    });
  });
}
