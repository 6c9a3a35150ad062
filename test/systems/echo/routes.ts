import { ANY_ACCESS } from "../../../storage/conversation-credentials";
import { Hono } from "hono";
import { AppError } from "../../../driver/errors";
import { runTurn } from "../../../driver/turn";
import type { AuthEnv } from "../../../http/auth";
import type { Deps } from "../../../http/deps";
import { readJson } from "../../../http/errors";
import { streamRun } from "../../../http/sse";
import { createConversation, findConversation } from "../../../storage/conversations";
import { appendMessages } from "../../../storage/messages";
import { EchoMessageBody, type EchoEvents } from "./contract";
import { echoSpec } from "./echo.machine";

export function echoRoutes(deps: Deps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.post("/v1/echo/conversations", async (c) => {
    const conv = await createConversation(deps.db.sql, c.get("tenantId"), "echo");
    return c.json({ conversationId: conv.id }, 201);
  });
  app.post("/v1/echo/conversations/:id/messages", async (c) => {
    const body = await readJson(c, EchoMessageBody);
    const conv = await findConversation(deps.db.sql, c.get("tenantId"), c.req.param("id"), "echo", ANY_ACCESS);
    if (!conv) throw new AppError("not_found", "Диалог не найден.");
    return streamRun<EchoEvents>(c, deps, {
      conversationId: conv.id,
      tenantId: conv.tenantId,
      kind: "echo",
      work: async (run) => {
        await runTurn({
          sql: deps.db.sql,
          run,
          spec: echoSpec,
          key: conv.id,
          conversationId: conv.id,
          events: [{ type: "user.message", text: body.text }],
          log: {},
          effects: {
            "effect.echo": async (e) => {
              const r = await deps.llm.complete("echo", [{ role: "user", content: String(e.text) }], {
                signal: run.signal,
              });
              if (!r.ok) throw new AppError("model_unavailable", "Модель временно недоступна.");
              return { type: "echo.replied", text: r.value };
            },
          },
          commit: (tx, s) =>
            appendMessages(
              tx,
              conv.id,
              [
                { role: "user", text: body.text },
                { role: "assistant", text: s.context.last ?? "" },
              ],
              run.id,
            ).then(() => {}),
          closing: (s) => [{ event: "final", data: { answer: s.context.last, turns: s.context.turns } }],
        });
      },
    });
  });
  return app;
}
