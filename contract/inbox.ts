import { z } from "zod";
import { err, ok, sseUnion, type Operation } from "./http";
import { userText } from "./user-text";
import { OperatorTypingEnvelope } from "./inbox-tools";

export const InboxStatus = z.enum(["open", "taken", "closed"]);
export type InboxStatus = z.infer<typeof InboxStatus>;

/**
 * The inbox's filter. `system` is a conversation kind of a served system: the gateway parses with
 * `inboxFilter(kinds)`, which narrows it to the systems list's kinds (this contract names none).
 */
export const InboxFilter = z.object({
  system: z.string().min(1).max(64).optional(),
  status: InboxStatus.optional(),
  escalated: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional(),
  reason: z.string().min(1).max(64).optional(),
  /** «мои» (assigned to the asking operator) / «не назначенные» / «все» (issue 43). */
  assigned: z.enum(["me", "none", "all"]).optional(),
  /** Last activity on or after / before (ISO dates or timestamps). */
  from: z.string().datetime({ offset: true }).or(z.string().date()).optional(),
  to: z.string().datetime({ offset: true }).or(z.string().date()).optional(),
  /** Text search over the messages, the contact phone and the id. */
  q: z.string().trim().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(300).optional(),
});
export type InboxFilter = z.infer<typeof InboxFilter>;
/** The filter with `system` one of `kinds` (http/routes/inbox.ts parses with it, the document shows it). */
export const inboxFilter = (kinds: readonly string[]) =>
  InboxFilter.extend({ system: z.enum(kinds as [string, ...string[]]).optional() });

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
  assignedTo: z.string().nullable().describe("who answers it: assigned, or who took it / got it by transfer"),
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
  lastEventSeq: z.number().int().describe("the thread event log's last number (follow its events from here)"),
});

const noConv = err("Нет диалога");

/** An operator's message, at most (issue 32). */
export const MAX_OPERATOR_CHARS = 4000;
/** A name the patient reads: validated like a text (only zero-width or format characters is empty). */
const Operator = userText(100, {
  empty: "operator не может быть пустым (только пробелы или невидимые символы)",
  tooLong: "operator: не больше 100 символов.",
});
export const TakeBody = z.object({
  operator: Operator.optional().describe("the operator's name as the patient sees it"),
});
/** Who will answer the thread (issue 43): a colleague's name; null unassigns. */
export const AssignBody = z.object({
  assignee: Operator.nullable().describe("the operator who will answer it (a person of API_TOKENS); null: nobody"),
});
/** The holder hands the thread to a colleague with no bot in between (issue 43). */
export const TransferBody = z.object({
  to: Operator.describe("the colleague who holds it from now (a person of API_TOKENS)"),
  operator: Operator.optional().describe("who hands it on (an integration token only; else the token's person)"),
});
export const OperatorList = z.object({
  operators: z.array(z.string()).describe("the people API_TOKENS binds to this tenant's operator and admin tokens"),
  me: z.string().nullable().describe("the asking token's person (null: none)"),
});
export const OperatorMessageBody = z.object({
  text: userText(MAX_OPERATOR_CHARS, {
    empty: "text не может быть пустым",
    tooLong: `Сообщение слишком длинное: не больше ${MAX_OPERATOR_CHARS} символов.`,
  }),
  operator: Operator.optional().describe("the author; absent: the operator who took the thread"),
});
export const OperatorMessage = z.object({
  seq: z.number().int().describe("the thread event's number (its SSE id on the thread's event stream)"),
  messageSeq: z.number().int().describe("the stored message's number in the transcript (role `operator`)"),
  operator: z.string(),
  text: z.string(),
  createdAt: z.string(),
  replayed: z.boolean().describe("true: a repeated Idempotency-Key; nothing new was written"),
});

const at = z.string().describe("when the event was stored (ISO)");
const reason = z.string().nullable().describe("the escalation reason at the time (null: not escalated)");
const Handback = z.object({
  operator: z.string().nullable(),
  reason,
  branch: z.string().nullable().describe("where the bot goes on (null: the next message is routed afresh)"),
  step: z.string().nullable(),
  at,
});
/** What a thread's event stream carries (GET /v1/clinic/threads/{id}/events; storage/thread-events.ts). */
export const threadEvents = {
  "conversation.taken": z.object({
    operator: z.string(),
    reason,
    escalated: z.boolean(),
    waitMs: z.number().nullable().describe("from the escalation to the take"),
    at,
  }),
  "operator.message": z.object({
    operator: z.string(),
    text: z.string(),
    messageSeq: z.number().int(),
    reason,
    first: z.boolean().describe("the first operator message since the take"),
    sinceTakenMs: z.number().nullable(),
    at,
  }),
  "conversation.released": Handback,
  "conversation.closed": Handback,
  "conversation.assigned": z.object({
    operator: z.string().describe("who assigned it"),
    assignee: z.string().nullable(),
    previous: z.string().nullable(),
    reason,
    at,
  }),
  "conversation.transferred": z.object({
    operator: z.string().describe("who handed it on"),
    from: z.string().nullable(),
    to: z.string(),
    reason,
    heldMs: z.number().nullable().describe("how long the one who handed it on had held it"),
    replies: z.number().int(),
    at,
  }),
  "patient.message": z.object({
    text: z.string(),
    reply: z.string().describe("what the patient was answered (the holding reply, or the emergency one)"),
    runId: z.string(),
    events: z.array(z.string()),
    contactPhone: z.string().nullable(),
    botDraft: z
      .string()
      .optional()
      .describe("the bot's answer an operator's take overtook (the patient got the holding reply instead)"),
    at,
  }),
};
/** The stored events (each with its id), and the ephemeral `operator.typing` (no id: contract/inbox-tools.ts). */
export const ThreadSseEvent = z.discriminatedUnion("event", [
  ...sseUnion(threadEvents).options,
  OperatorTypingEnvelope,
]);
const SystemFilter = InboxFilter.omit({ system: true });

/** A system's own list of its conversations (its contract's `inboxList`), as the document describes it. */
export const systemListOperation = (l: {
  operationId: string;
  path: string;
  summary: string;
  description: string;
}): Operation => ({ ...l, method: "get", tag: "inbox", query: SystemFilter, responses: { 200: ok(InboxList) } });

/** The inbox's operations, its filter's `system` one of `kinds` (the served systems' conversation kinds). */
export const inboxOperations = (kinds: readonly string[]): Operation[] => [
  {
    operationId: "listInbox",
    method: "get",
    path: "/v1/inbox/conversations",
    tag: "inbox",
    query: inboxFilter(kinds),
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
    description:
      "Одно обращение: статус (open/taken/closed), кто взял, причина эскалации, телефон пациента и вся расшифровка диалога.",
    responses: { 200: ok(InboxDetail), 404: noConv },
  },
  {
    operationId: "takeInboxConversation",
    method: "post",
    path: "/v1/inbox/conversations/{id}/take",
    tag: "inbox",
    summary: "Оператор берёт диалог: бот молчит (машина в состоянии human), пациенту отвечает оператор",
    description:
      "Автор — человек, к которому API_TOKENS привязывает токен; имя в теле принимается только от интеграционного токена (…:TOKEN:*). " +
      "Взятие ждёт идущего хода пациента не дольше, чем идёт его запись: ход пациента, который обогнало взятие, применяется заново поверх него.",
    body: TakeBody,
    responses: {
      200: ok(InboxItem),
      400: err("Имя оператора пустое или из невидимых символов"),
      403: err("Токен привязан к другому человеку (details.reason operator_name_not_allowed)"),
      404: noConv,
      409: err("Диалог ведёт другой оператор (details.reason taken_by_another) или это не диалог клиники"),
    },
  },
  {
    operationId: "assignInboxConversation",
    method: "post",
    path: "/v1/inbox/conversations/{id}/assign",
    tag: "inbox",
    summary: "Назначить диалог сотруднику (или снять назначение: assignee null)",
    description:
      "Для диалога, который никто не ведёт; ведомый диалог передают (transfer). Событие `conversation.assigned` — в журнале диалога и вебхуке.",
    body: AssignBody,
    responses: {
      200: ok(InboxItem),
      400: err("Неизвестный сотрудник (details.reason unknown_operator) или пустое имя"),
      404: noConv,
      409: err("Диалог ведёт оператор: передайте его (details.reason held)"),
    },
  },
  {
    operationId: "transferInboxConversation",
    method: "post",
    path: "/v1/inbox/conversations/{id}/transfer",
    tag: "inbox",
    summary: "Передать ведомый диалог коллеге — без бота между ними",
    description:
      "Машина остаётся в состоянии human, диалог ведёт коллега; событие `conversation.transferred` — в журнале, потоке пациента и вебхуке. Повтор (диалог уже у него) — 200.",
    body: TransferBody,
    responses: {
      200: ok(InboxItem),
      400: err("Неизвестный сотрудник (details.reason unknown_operator) или пустое имя"),
      404: noConv,
      409: err("Диалог никто не ведёт (details.reason not_held)"),
    },
  },
  {
    operationId: "listInboxOperators",
    method: "get",
    path: "/v1/inbox/operators",
    tag: "inbox",
    summary: "Сотрудники (люди токенов API_TOKENS этого арендатора) и кто спрашивает",
    description:
      "Список для назначения и передачи диалога: люди, к которым API_TOKENS привязывает токены operator и admin этого арендатора, " +
      "и `me` — человек токена запроса (null для интеграционного токена и открытого режима).",
    responses: { 200: ok(OperatorList) },
  },
  {
    operationId: "sendOperatorMessage",
    method: "post",
    path: "/v1/inbox/conversations/{id}/messages",
    tag: "inbox",
    summary: "Оператор пишет пациенту в диалог, который он взял",
    description:
      "Любой оператор может писать в диалог со статусом taken (автор — человек токена; `operator` тела — только от интеграционного токена; иначе взявший диалог). " +
      "Сообщение хранится с ролью `operator` и сразу приходит пациенту в GET /v1/clinic/threads/{threadId}/events.",
    headers: {
      idempotencyKey:
        "a retry with the same key and text answers with the message already written (200, replayed: true); the same key with another text is 409 idempotency_key_reused",
    },
    body: OperatorMessageBody,
    responses: {
      201: ok(OperatorMessage, "Записано"),
      200: ok(OperatorMessage, "Повтор запроса с тем же Idempotency-Key"),
      404: noConv,
      409: err("Диалог не у оператора (details.reason not_held) или ключ отдан другому тексту"),
    },
  },
  {
    operationId: "releaseInboxConversation",
    method: "post",
    path: "/v1/inbox/conversations/{id}/release",
    tag: "inbox",
    summary: "Вернуть диалог боту: передача оператору снята, запись продолжается с того шага, где остановилась",
    description: "Оператор отдаёт диалог боту: машина выходит из human в то состояние, из которого диалог был передан.",
    responses: { 200: ok(InboxItem), 404: noConv, 409: err("Диалог не у оператора") },
  },
  {
    operationId: "closeInboxConversation",
    method: "post",
    path: "/v1/inbox/conversations/{id}/close",
    tag: "inbox",
    summary: "Закрыть обращение",
    description: "Обращение закрыто: пропадает из очереди ожидающих, история остаётся.",
    responses: { 200: ok(InboxItem), 404: noConv },
  },
  {
    operationId: "eraseConversation",
    method: "delete",
    path: "/v1/inbox/conversations/{id}",
    tag: "inbox",
    summary: "Удалить диалог и все его данные (право на удаление)",
    description:
      "Удаляет диалог со всеми сообщениями, запусками, событиями и доставками вебхуков (каскадом). Идущий ход — 409; повтор после удаления — 404.",
    responses: { 204: { description: "Удалён" }, 404: noConv, 409: err("Идёт ход диалога") },
  },
];

export const inboxSchemas: Record<string, z.ZodType> = {
  InboxItem,
  InboxList,
  InboxDetail,
  OperatorMessage,
  OperatorList,
  ThreadSseEvent,
};
