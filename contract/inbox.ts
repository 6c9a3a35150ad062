import { z } from "zod";
import { err, ok, type Operation } from "./http";

export const InboxStatus = z.enum(["open", "taken", "closed"]);
export type InboxStatus = z.infer<typeof InboxStatus>;

export const InboxFilter = z.object({
  system: z.enum(["clinic", "workbench", "evidence"]).optional(),
  status: InboxStatus.optional(),
  escalated: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional(),
  reason: z.string().min(1).max(64).optional(),
  /** Last activity on or after / before (ISO dates or timestamps). */
  from: z.string().datetime({ offset: true }).or(z.string().date()).optional(),
  to: z.string().datetime({ offset: true }).or(z.string().date()).optional(),
  /** Text search over the messages, the contact phone and the id. */
  q: z.string().trim().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(300).optional(),
});
export type InboxFilter = z.infer<typeof InboxFilter>;

/** One conversation as the inbox lists it (storage/inbox.ts reads rows into it). */
export const InboxItem = z.object({
  id: z.string(),
  system: z.string(),
  status: InboxStatus,
  escalated: z.boolean(),
  escalationReason: z.string().nullable(),
  escalatedAt: z.string().nullable(),
  contactPhone: z.string().nullable(),
  takenBy: z.string().nullable(),
  createdAt: z.string(),
  lastActivityAt: z.string(),
  messageCount: z.number().int(),
  lastMessage: z.object({ role: z.string(), text: z.string() }).nullable(),
});
export type InboxItem = z.infer<typeof InboxItem>;

/** The operators' inbox on the wire (http/routes/inbox.ts): item and filter are the repository's own schemas. */
export const InboxList = z.object({ items: z.array(InboxItem), nextCursor: z.string().nullable() });
export const InboxDetail = InboxItem.extend({
  state: z.unknown().optional().describe("the clinic thread's state (clinic only)"),
  messages: z.array(
    z.object({ seq: z.number().int(), role: z.string(), text: z.string(), meta: z.unknown(), createdAt: z.string() }),
  ),
});

const noConv = err("Нет диалога");
const SystemFilter = InboxFilter.omit({ system: true });

export const inboxOperations: Operation[] = [
  {
    operationId: "listInbox",
    method: "get",
    path: "/v1/inbox/conversations",
    tag: "inbox",
    query: InboxFilter,
    summary: "Обращения: диалоги всех систем, ждущие человека — первыми",
    description: "Курсорная пагинация: `nextCursor` → `?cursor=`.",
    responses: { 200: ok(InboxList), 400: err("Неверный фильтр или курсор") },
  },
  {
    operationId: "getInboxConversation",
    method: "get",
    path: "/v1/inbox/conversations/{id}",
    tag: "inbox",
    summary: "Обращение с расшифровкой",
    responses: { 200: ok(InboxDetail), 404: noConv },
  },
  {
    operationId: "takeInboxConversation",
    method: "post",
    path: "/v1/inbox/conversations/{id}/take",
    tag: "inbox",
    summary: "Оператор берёт диалог: бот до освобождения отвечает только просьбой подождать",
    responses: { 200: ok(InboxItem), 404: noConv },
  },
  {
    operationId: "releaseInboxConversation",
    method: "post",
    path: "/v1/inbox/conversations/{id}/release",
    tag: "inbox",
    summary: "Вернуть диалог боту (снимает передачу оператору)",
    responses: { 200: ok(InboxItem), 404: noConv },
  },
  {
    operationId: "closeInboxConversation",
    method: "post",
    path: "/v1/inbox/conversations/{id}/close",
    tag: "inbox",
    summary: "Закрыть обращение",
    responses: { 200: ok(InboxItem), 404: noConv },
  },
  {
    operationId: "eraseConversation",
    method: "delete",
    path: "/v1/inbox/conversations/{id}",
    tag: "inbox",
    summary: "Удалить диалог и все его данные (право на удаление)",
    responses: { 204: { description: "Удалён" }, 404: noConv, 409: err("Идёт ход диалога") },
  },
  {
    operationId: "listClinicThreads",
    method: "get",
    path: "/v1/clinic/threads",
    tag: "inbox",
    query: SystemFilter,
    summary: "Диалоги клиники (как /v1/inbox/conversations?system=clinic)",
    responses: { 200: ok(InboxList) },
  },
  {
    operationId: "listWorkbenchConversations",
    method: "get",
    path: "/v1/workbench/conversations",
    tag: "inbox",
    query: SystemFilter,
    summary: "Диалоги Workbench (постранично)",
    responses: { 200: ok(InboxList) },
  },
  {
    operationId: "listEvidenceConversations",
    method: "get",
    path: "/v1/evidence/conversations",
    tag: "inbox",
    query: SystemFilter,
    summary: "Диалоги Evidence (постранично)",
    responses: { 200: ok(InboxList) },
  },
];

export const inboxSchemas: Record<string, z.ZodType> = { InboxItem, InboxList, InboxDetail };
