import { z } from "zod";
import { err, ok, type Operation } from "./http";

/** Dead letters of the outbound webhook (doc/webhooks.md): listed and sent again by an admin. */
export const DeadLetter = z
  .object({
    id: z.string().meta({ description: "the dead letter's id (re-deliver it by this)", examples: ["17"] }),
    outboxId: z
      .string()
      .meta({ description: "the delivery's id: the webhook-id header a receiver saw", examples: ["42"] }),
    conversationId: z.string(),
    seq: z
      .number()
      .int()
      .meta({ description: "the delivery's number within its conversation", examples: [3] }),
    event: z.string().meta({ examples: ["conversation.escalated"] }),
    attempts: z.number().int(),
    lastError: z
      .string()
      .nullable()
      .meta({ examples: ["HTTP 500"] }),
    createdAt: z.string().meta({ description: "when it became a dead letter", examples: ["2026-12-07T09:30:00.000Z"] }),
  })
  .meta({ description: "A webhook delivery that failed every attempt within its retry horizon." });
export const DeadLetters = z.object({ deadLetters: z.array(DeadLetter) });
export const Redelivered = z.object({
  outboxId: z.string(),
  status: z.literal("pending").meta({ description: "queued again: delivered in its conversation's order" }),
});

export const webhookSchemas: Record<string, z.ZodType> = { DeadLetter, DeadLetters, Redelivered };

export const webhookOperations: Operation[] = [
  {
    operationId: "listWebhookDeadLetters",
    method: "get",
    path: "/v1/webhooks/dead-letters",
    tag: "webhooks",
    summary: "Недоставленные вебхуки (dead letters)",
    description:
      "Доставки, которые не удались ни разу за горизонт повторов (WEBHOOK_RETRY_HORIZON_MS), новые первыми — с последней ошибкой и номером в диалоге.",
    responses: { 200: ok(DeadLetters) },
  },
  {
    operationId: "redeliverWebhookDeadLetter",
    method: "post",
    path: "/v1/webhooks/dead-letters/{id}/redeliver",
    tag: "webhooks",
    summary: "Отправить недоставленный вебхук снова",
    description:
      "Доставка снова в очереди: тот же webhook-id и seq, новый горизонт повторов. Получатель, который её всё же получил, отбросит её по id.",
    responses: { 200: ok(Redelivered), 404: err("Нет такого недоставленного вебхука") },
  },
];
