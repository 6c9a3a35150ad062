import { z } from "zod";
import { Created, err, ok, runEvents, sseUnion, type EventsOf, type SystemContract } from "../../../http/contract";

/** The echo system's request body, events and operations: its one zod source (routes parse with it, /openapi.json documents it). */
export const EchoMessageBody = z.object({ text: z.string().min(1).max(1000) });

const echoEvents = { ...runEvents, final: z.object({ answer: z.string().nullable(), turns: z.number().int() }) };
export type EchoEvents = EventsOf<typeof echoEvents>;
export const EchoSseEvent = sseUnion(echoEvents);

export const echoContract: SystemContract = {
  operations: [
    {
      operationId: "createEchoConversation",
      role: "chat",
      method: "post",
      path: "/v1/echo/conversations",
      tag: "echo",
      summary: "Новый диалог эха",
      responses: { 201: ok(Created.conversation, "Создан") },
    },
    {
      operationId: "sendEchoMessage",
      role: "chat",
      method: "post",
      path: "/v1/echo/conversations/{id}/messages",
      tag: "echo",
      summary: "Реплика → поток SSE",
      body: EchoMessageBody,
      responses: {
        200: { description: "run_started, token…, final, done", sse: EchoSseEvent },
        404: err("Нет диалога"),
      },
    },
  ],
  schemas: { EchoSseEvent },
  sseEvent: EchoSseEvent,
  tags: [{ name: "echo", description: "Тестовая система" }],
  inboxList: {
    operationId: "listEchoConversations",
    path: "/v1/echo/conversations",
    summary: "Диалоги эха (постранично)",
    description: "Диалоги тестовой системы по убыванию активности, постранично (`cursor`).",
  },
};
