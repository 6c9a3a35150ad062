import { z } from "zod";
import { err, ok, type Operation } from "./http";
import { userText } from "./user-text";

/**
 * The operator's desk beyond take / write / release (issue 43 item 4): quick replies, internal
 * notes, presence, reminders. Served by http/routes/inbox-tools.ts; every route is an operator's
 * (http/roles.ts: not listed for `chat`, so a patient's token gets 403).
 */

const Operator = z.string().trim().min(1).max(100);
const at = z.string().describe("ISO time");

// ---- quick replies ----
export const MAX_QUICK_REPLY_CHARS = 4000;
export const QuickReplyBody = z.object({
  title: userText(80, { empty: "title не может быть пустым", tooLong: "Название: не больше 80 символов." }).describe(
    "what the composer's `/` filter matches first (unique per tenant, case-insensitive)",
  ),
  text: userText(MAX_QUICK_REPLY_CHARS, {
    empty: "text не может быть пустым",
    tooLong: `Шаблон слишком длинный: не больше ${MAX_QUICK_REPLY_CHARS} символов.`,
  }),
});
export const QuickReply = z.object({
  id: z.string(),
  title: z.string(),
  text: z.string(),
  createdAt: at,
  updatedAt: at,
});
export const QuickReplyList = z.object({ items: z.array(QuickReply) });

// ---- internal notes ----
export const MAX_NOTE_CHARS = 4000;
export const NoteBody = z.object({
  text: userText(MAX_NOTE_CHARS, {
    empty: "text не может быть пустым",
    tooLong: `Заметка слишком длинная: не больше ${MAX_NOTE_CHARS} символов.`,
  }),
  operator: Operator.optional().describe("the note's author (the inbox sends the operator's name)"),
});
export const Note = z.object({ id: z.string(), author: z.string(), text: z.string(), createdAt: at });
export const NoteList = z.object({ items: z.array(Note) });

// ---- presence ----
export const PresenceState = z.enum(["viewing", "typing", "left"]);
export const PresenceBody = z.object({
  state: PresenceState.describe("viewing: the thread is open; typing: the composer is being typed in; left: closed"),
  operator: Operator.optional().describe("who (the inbox sends the operator's name)"),
});
export const ThreadPresence = z.object({
  conversationId: z.string(),
  viewing: z.array(z.string()).describe("operators who have the thread open (typing ones included)"),
  typing: z.array(z.string()).describe("operators typing in its composer"),
  genitive: z
    .record(z.string(), z.string())
    .describe(
      "each viewer's name in the genitive, for «открыто у Ивана» (as written when the dictionary does not know it)",
    ),
});
/** What the patient's stream is told: a human is typing (no list of who has the thread open). */
export const OperatorTyping = z.object({
  typing: z.boolean(),
  operator: z.string().nullable().describe("the first of the typing operators; null when nobody types"),
});
const ephemeral = (name: string, data: z.ZodType) =>
  z
    .object({
      event: z.literal(name),
      id: z.never().optional().describe("never sent: the event moves no Last-Event-ID"),
      data,
    })
    .describe("ephemeral: no id, not stored, not replayed");
/**
 * Who handles a thread changed: an operator took, released, closed, assigned or transferred it,
 * or a patient's turn escalated it to a human.
 */
export const HandlingKind = z.enum(["take", "release", "close", "assign", "transfer", "escalate"]);
export type HandlingKind = z.infer<typeof HandlingKind>;
export const PresenceSseEvent = z.discriminatedUnion("event", [
  ephemeral("presence.snapshot", z.object({ items: z.array(ThreadPresence) })),
  ephemeral("presence", ThreadPresence),
  ephemeral("reminder", z.object({ conversationId: z.string(), kind: z.string() })),
  ephemeral("note", z.object({ conversationId: z.string(), id: z.string(), author: z.string() })),
  ephemeral("handling", z.object({ conversationId: z.string(), kind: HandlingKind })),
]);
/** The thread stream's ephemeral member (contract/inbox.ts adds it to ThreadSseEvent). */
export const OperatorTypingEnvelope = ephemeral("operator.typing", OperatorTyping);

// ---- reminders ----
export const ReminderKind = z.enum(["untaken", "silent"]);
export const Reminder = z.object({
  conversationId: z.string(),
  kind: ReminderKind.describe("untaken: an escalation nobody took in time; silent: a held thread where nobody wrote"),
  since: at.describe("when the wait began: the escalation, or the thread's last message / the take"),
  raisedAt: at,
  operator: z.string().nullable().describe("who held the thread (silent)"),
  requeued: z.boolean().describe("the thread was returned to the queue"),
});
export const ReminderList = z.object({ items: z.array(Reminder) });

const noConv = err("Нет диалога");
const badBody = err("Неверное тело запроса");

export const inboxToolOperations: Operation[] = [
  {
    operationId: "listQuickReplies",
    method: "get",
    path: "/v1/inbox/quick-replies",
    tag: "inbox",
    summary: "Быстрые ответы (шаблоны) арендатора, по названию",
    description:
      "Шаблоны ответов операторов арендатора, отсортированные по названию; в композиторе — кнопки и фильтр по «/».",
    responses: { 200: ok(QuickReplyList) },
  },
  {
    operationId: "createQuickReply",
    method: "post",
    path: "/v1/inbox/quick-replies",
    tag: "inbox",
    summary: "Новый быстрый ответ",
    description:
      "Название уникально в арендаторе без учёта регистра (иначе 409 duplicate_title); пустые или невидимые название и текст — 400.",
    body: QuickReplyBody,
    responses: { 201: ok(QuickReply, "Создан"), 400: badBody, 409: err("Шаблон с таким названием уже есть") },
  },
  {
    operationId: "updateQuickReply",
    method: "put",
    path: "/v1/inbox/quick-replies/{id}",
    tag: "inbox",
    summary: "Изменить быстрый ответ",
    description: "Заменяет название и текст шаблона; правила те же, что при создании; чужой или неизвестный id — 404.",
    body: QuickReplyBody,
    responses: {
      200: ok(QuickReply),
      400: badBody,
      404: err("Нет такого шаблона"),
      409: err("Шаблон с таким названием уже есть"),
    },
  },
  {
    operationId: "deleteQuickReply",
    method: "delete",
    path: "/v1/inbox/quick-replies/{id}",
    tag: "inbox",
    summary: "Удалить быстрый ответ",
    description: "Удаляет шаблон арендатора; повторное удаление — 404.",
    responses: { 204: { description: "Удалён" }, 404: err("Нет такого шаблона") },
  },
  {
    operationId: "listNotes",
    method: "get",
    path: "/v1/inbox/conversations/{id}/notes",
    tag: "inbox",
    summary: "Внутренние заметки операторов к диалогу (пациент и модель их не видят)",
    description:
      "Заметки хранятся отдельно от сообщений: их нет в потоке пациента, в расшифровке диалога и в промптах моделей.",
    responses: { 200: ok(NoteList), 404: noConv },
  },
  {
    operationId: "addNote",
    method: "post",
    path: "/v1/inbox/conversations/{id}/notes",
    tag: "inbox",
    summary: "Добавить внутреннюю заметку",
    description:
      "Заметка хранится отдельно от сообщений: её нет в расшифровке пациента, в потоке событий диалога и в промптах модели.",
    body: NoteBody,
    responses: { 201: ok(Note, "Добавлена"), 400: badBody, 404: noConv },
  },
  {
    operationId: "reportPresence",
    method: "post",
    path: "/v1/inbox/conversations/{id}/presence",
    tag: "inbox",
    summary: "Присутствие оператора: открыл диалог, печатает, ушёл (сердцебиение раз в несколько секунд)",
    description:
      "Не хранится: живёт в памяти процесса и рассылается другим процессам через LISTEN/NOTIFY; без повторения гаснет через PRESENCE_TTL_MS.",
    body: PresenceBody,
    responses: { 200: ok(ThreadPresence), 400: badBody, 404: noConv },
  },
  {
    operationId: "followPresence",
    method: "get",
    path: "/v1/inbox/presence",
    tag: "inbox",
    summary: "Поток присутствия операторов, напоминаний и заметок (SSE)",
    description:
      "Сначала `presence.snapshot`, затем `presence` при каждом изменении, `reminder` при новом напоминании, `note` при новой заметке, `handling` когда диалог взяли, вернули боту, закрыли, назначили, передали или он стал ждать человека. События без id: ничего не хранится.",
    responses: { 200: { description: "События присутствия", sse: PresenceSseEvent } },
  },
  {
    operationId: "listReminders",
    method: "get",
    path: "/v1/inbox/reminders",
    tag: "inbox",
    summary: "Действующие напоминания: эскалация ждёт дольше N минут, взятый диалог молчит дольше M минут",
    description:
      "Напоминания, которые ещё в силе (эскалацию не взяли; взятый диалог всё ещё молчит); пороги — REMIND_UNTAKEN_AFTER_MIN и REMIND_SILENT_AFTER_MIN.",
    responses: { 200: ok(ReminderList) },
  },
];

export const inboxToolSchemas: Record<string, z.ZodType> = {
  QuickReply,
  QuickReplyList,
  Note,
  NoteList,
  ThreadPresence,
  PresenceSseEvent,
  Reminder,
  ReminderList,
};
