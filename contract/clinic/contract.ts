import { z } from "zod";
import { userText } from "../user-text";
import {
  Created,
  err,
  ok,
  ResumeQuery,
  runEvents,
  sseUnion,
  type EventsOf,
  type Operation,
  type SystemContract,
} from "../http";
import { ThreadSseEvent } from "../inbox";
import { HumanHold } from "./human";
import { DeskSettings } from "./desk";
import { BranchCode, BranchConfig, ClinicState, RouterConfig, StepGraph } from "./types";

/**
 * The clinic's wire contract (CONTRACT §5) in one place: request bodies and queries the routes
 * parse with, the bodies they answer, the events a turn streams, and the operations of the
 * OpenAPI document.
 */

export const MAX_MESSAGE_CHARS = 4000;

// ---- patient chat ----
export const ClinicMessageBody = z.object({
  text: userText(MAX_MESSAGE_CHARS, {
    empty: "text не может быть пустым",
    tooLong: `Сообщение слишком длинное: не больше ${MAX_MESSAGE_CHARS} символов. Сократите его, пожалуйста.`,
  }),
  debug: z.boolean().optional().describe("true → `stage` events (RAG fragments, the assembled system prompt)"),
});

/** What happened on a turn (CONTRACT §5.3), plus the clinic's own `red_flag`. */
export const ClinicTurnEvent = z
  .string()
  .describe(
    "sticky, soft_insertion, handoff, resumed, guard_blocked:<guard>, transition_rejected, loop_guard, escalated, model_unavailable, red_flag, held_by_operator",
  );

export const ClinicFinal = z.object({
  reply: z.string(),
  state: ClinicState,
  events: z.array(ClinicTurnEvent),
  notes: z.array(z.string()).optional().describe("only with debug: why a service tail or signal was not used"),
});
export type ClinicFinal = z.infer<typeof ClinicFinal>;

/** `intent` is null when the router's reply named no known intent (the machine then keeps or asks). */
export const RouterDecision = z.object({ intent: BranchCode.nullable() });

export const clinicEvents = { ...runEvents, router_decision: RouterDecision, final: ClinicFinal };
export type ClinicEvents = EventsOf<typeof clinicEvents>;
// The clinic system's entry among every system's run events (contract/http.ts `SystemEvents`).
declare module "../http" {
  interface SystemEvents {
    clinic: ClinicEvents;
  }
}
export const ClinicSseEvent = sseUnion(clinicEvents);

export const ClinicMessage = z.object({
  role: z
    .enum(["user", "assistant", "system", "tool", "operator"])
    .describe("operator: an operator's message, meta.author names him"),
  text: z.string(),
  meta: z
    .record(z.string(), z.unknown())
    .describe("assistant turns: activeBranch, step, events, fragments, settings; runId names the stored run"),
});
export const ClinicThread = z.object({
  threadId: z.string(),
  state: ClinicState,
  messages: z.array(ClinicMessage),
  human: HumanHold.nullable().describe("the operator who holds the thread (the bot is silent); null: the bot answers"),
  lastEventSeq: z
    .number()
    .int()
    .describe("the thread event log's last number: follow /events from here (Last-Event-ID) to miss nothing"),
});
export const ReleasedThread = z.object({ threadId: z.string(), released: z.literal(true), state: ClinicState });

// ---- settings ----
export const BranchSettings = z.object({
  versions: z.string().describe("the active versions, e.g. `new_booking@2,…;steps:new_booking@1`"),
  branches: z.array(BranchConfig),
  stepGraphs: z.array(StepGraph),
  router: RouterConfig.optional().describe("the `_router` system branch's active version; absent → the seed's prompt"),
});
const timestamp = z.string().describe("ISO 8601");
export const BranchVersionRow = z.object({
  code: z.string(),
  version: z.number().int(),
  active: z.boolean(),
  config: z.record(z.string(), z.unknown()),
  createdAt: timestamp,
});
export const StepGraphVersionRow = z.object({
  branch: z.string(),
  version: z.number().int(),
  active: z.boolean(),
  graph: z.record(z.string(), z.unknown()),
  createdAt: timestamp,
});
export const BranchVersions = z.object({ versions: z.array(BranchVersionRow) });
export const StepGraphVersions = z.object({ versions: z.array(StepGraphVersionRow) });
export const NewBranchVersion = z.object({
  config: z
    .record(z.string(), z.unknown())
    .describe(
      "BranchConfig (or, for `_router`, RouterConfig) fields to change; the rest is taken from the active version, the result is validated",
    ),
  activate: z.boolean().default(true),
});
export const NewStepGraph = z.object({
  graph: z
    .record(z.string(), z.unknown())
    .describe(
      "{initial?, steps: StepSpec[]}: `branch` comes from the URL, `version` from the store; allowed_next must name existing steps",
    ),
  activate: z.boolean().default(true),
});
export const BranchVersionSaved = z.object({ code: z.string(), version: z.number().int(), active: z.boolean() });
export const StepGraphSaved = z.object({ branch: z.string(), version: z.number().int(), active: z.boolean() });

// ---- knowledge base ----
export const KbDocumentBody = z.object({
  id: z
    .string()
    .regex(/^[\w.-]{1,128}$/)
    .optional()
    .describe("omitted → a slug of the title"),
  title: z.string().trim().min(1).max(300),
  text: z.string().min(1).max(1_000_000),
  branch: BranchCode.nullable().optional(),
});
export const KbDocumentSummary = z.object({
  id: z.string(),
  title: z.string(),
  branch: z.string().nullable(),
  version: z.number().int(),
  chunkCount: z.number().int(),
  updatedAt: timestamp,
});
export const KbDocument = KbDocumentSummary.extend({ body: z.string() });
export const KbDocuments = z.object({ documents: z.array(KbDocumentSummary) });
export const KbDocumentIndexed = z.object({
  documentId: z.string(),
  version: z.number().int(),
  chunks: z.number().int(),
});
export const KbChunk = z.object({ ord: z.number().int(), heading: z.string(), text: z.string() });
export const KbChunks = z.object({ documentId: z.string(), version: z.number().int(), chunks: z.array(KbChunk) });
export const KbReindexed = z.object({ documents: z.number().int(), chunks: z.number().int() });
/** The demo knowledge base loaded on a fresh install (ids `demo-…`): how many documents a load wrote or a removal deleted. */
export const KbDemoResult = z.object({ documents: z.number().int() });
export const KbSearchQuery = z.object({
  q: z
    .string()
    .default("")
    .refine((q) => q.trim() !== "", "Нужен параметр q."),
  branch: z.string().optional().describe("a branch code; an unknown one is 404"),
  // Lenient as it always was: anything but a positive number means 5, more than 20 means 20.
  limit: z
    .string()
    .optional()
    .describe("1–20, default 5")
    .transform((v) => Math.min(Number(v ?? 5) || 5, 20)),
});
export const KbFragment = z.object({ docId: z.string(), heading: z.string(), text: z.string(), score: z.number() });
export const KbSearchResult = z.object({ query: z.string(), fragments: z.array(KbFragment) });

/** Names of the shapes in the OpenAPI components. */
export const clinicSchemas: Record<string, z.ZodType> = {
  DeskSettings,
  ClinicState,
  ClinicFinal,
  RouterDecision,
  ClinicThread,
  ClinicSseEvent,
  BranchConfig,
  StepGraph,
  RouterConfig,
  BranchSettings,
  BranchVersionRow,
  StepGraphVersionRow,
  KbDocumentSummary,
  KbDocument,
  KbChunk,
  KbFragment,
  ThreadCreated: Created.thread,
  ReleasedThread,
  BranchVersions,
  StepGraphVersions,
  BranchVersionSaved,
  StepGraphSaved,
  KbDocuments,
  KbDocumentIndexed,
  KbChunks,
  KbReindexed,
  KbDemoResult,
  KbSearchResult,
};

const noThread = err("Нет диалога");
export const clinicOperations: Operation[] = [
  {
    operationId: "createClinicThread",
    role: "chat",
    credential: "issued",
    method: "post",
    path: "/v1/clinic/threads",
    tag: "clinic",
    summary: "Новый диалог пациента",
    description: "Создаёт диалог пациента и его машину состояний; возвращает `threadId` для реплик и потока событий.",
    responses: { 201: ok(Created.thread, "Создан") },
  },
  {
    operationId: "getClinicThread",
    role: "chat",
    credential: "required",
    method: "get",
    path: "/v1/clinic/threads/{threadId}",
    tag: "clinic",
    summary: "Состояние и сообщения диалога",
    description: "Текущее состояние машины диалога (ветка, шаг, слоты, эскалация) и все сообщения с метаданными хода.",
    responses: { 200: ok(ClinicThread), 404: noThread },
  },
  {
    operationId: "sendClinicMessage",
    role: "chat",
    credential: "required",
    method: "post",
    path: "/v1/clinic/threads/{threadId}/messages",
    tag: "clinic",
    summary: "Реплика пациента → поток SSE",
    description:
      "Один ход: маршрутизатор выбирает ветку, ветка отвечает по базе знаний, машина фиксирует переход — всё в одной транзакции. Поток: run_started, router_decision, token…, final, done. С тем же `Idempotency-Key` повтор отдаёт тот же запуск (Idempotent-Replayed: true).",
    body: ClinicMessageBody,
    responses: {
      409: err(
        "Диалог занят другим ходом (details.reason conversation_busy) или Idempotency-Key отдан другому телу (idempotency_key_reused)",
      ),
      200: { description: "run_started, [stage], router_decision, token…, final, done", sse: ClinicSseEvent },
      404: noThread,
    },
  },
  {
    operationId: "releaseClinicThread",
    method: "post",
    path: "/v1/clinic/threads/{threadId}/release",
    tag: "clinic",
    summary: "Оператор возвращает переданный ему диалог боту",
    description: "То же, что /v1/inbox/conversations/{id}/release, для диалога клиники: бот снова отвечает.",
    responses: { 200: ok(ReleasedThread), 404: noThread, 409: err("Диалог не передан оператору") },
  },
  {
    operationId: "followClinicThread",
    role: "chat",
    credential: "required",
    method: "get",
    path: "/v1/clinic/threads/{threadId}/events",
    tag: "clinic",
    summary: "События диалога для пациента: оператор взял диалог, написал, вернул боту, закрыл",
    description:
      "Поток SSE без конца; id события — его номер в журнале диалога, переподключение с Last-Event-ID ничего не теряет. " +
      "Получают все вкладки диалога, в том числе через другой процесс сервера.",
    headers: { lastEventId: true },
    query: ResumeQuery,
    responses: {
      200: { description: "события диалога", sse: ThreadSseEvent },
      400: err("Last-Event-ID дальше конца журнала (details.reason last_event_id_past_end, details.lastEventId)"),
      404: noThread,
    },
  },
  {
    operationId: "getClinicDesk",
    method: "get",
    path: "/v1/clinic/desk",
    tag: "clinic-settings",
    summary: "Ресепшен клиники: часы работы, часовой пояс, обещание ответа, тишина бота при операторе",
    description: "Без настройки — круглосуточно (обещание «в течение ближайшего часа»).",
    responses: { 200: ok(DeskSettings) },
  },
  {
    operationId: "setClinicDesk",
    method: "post",
    path: "/v1/clinic/desk",
    tag: "clinic-settings",
    summary: "Задать часы работы: вне их эскалация обещает ответ в рабочее время, а не «в течение часа»",
    description:
      "Заменяет настройки целиком (роль admin). Часы — по дням недели в часовом поясе клиники, null — выходной; " +
      "обещание ответа действует в рабочее время, вне его эскалация называет ближайшее открытие.",
    body: DeskSettings,
    responses: { 200: ok(DeskSettings), 400: err("Неверные часы, часовой пояс или интервалы") },
  },
  {
    operationId: "getClinicBranches",
    method: "get",
    path: "/v1/clinic/branches",
    tag: "clinic-settings",
    summary: "Активные настройки веток и графы шагов",
    description:
      "Активная версия настроек каждой ветки (промпт, заголовок) и активные графы шагов; системная ветка маршрутизатора `_router` отдельно.",
    responses: { 200: ok(BranchSettings) },
  },
  {
    operationId: "listBranchVersions",
    method: "get",
    path: "/v1/clinic/branches/{code}/versions",
    tag: "clinic-settings",
    summary: "Версии настроек ветки",
    description: "Все сохранённые версии настроек ветки, новые первыми; активна ровно одна.",
    responses: { 200: ok(BranchVersions), 404: err("Нет ветки") },
  },
  {
    operationId: "createBranchVersion",
    method: "post",
    path: "/v1/clinic/branches/{code}/versions",
    tag: "clinic-settings",
    summary: "Новая версия настроек ветки",
    description: "Сохраняет новую версию настроек ветки (неизменяемую); активной её делает отдельный вызов activate.",
    body: NewBranchVersion,
    responses: { 201: ok(BranchVersionSaved, "Сохранена"), 404: err("Нет ветки") },
  },
  {
    operationId: "activateBranchVersion",
    method: "post",
    path: "/v1/clinic/branches/{code}/versions/{version}/activate",
    tag: "clinic-settings",
    summary: "Сделать версию активной (в том числе откат)",
    description: "Делает версию активной: следующий ход диалога читает её. Активировать прежнюю версию — это откат.",
    responses: { 200: ok(BranchVersionSaved), 404: err("Нет версии") },
  },
  {
    operationId: "listStepGraphVersions",
    method: "get",
    path: "/v1/clinic/branches/{code}/steps/versions",
    tag: "clinic-settings",
    summary: "Версии графа шагов",
    description: "Все версии графа шагов ветки (шаги, допустимые переходы, защиты), новые первыми.",
    responses: { 200: ok(StepGraphVersions), 404: err("Нет ветки") },
  },
  {
    operationId: "createStepGraph",
    method: "post",
    path: "/v1/clinic/branches/{code}/steps",
    tag: "clinic-settings",
    summary: "Новая версия графа шагов (prompt, allowed_next, guards)",
    description: "400: граф не прошёл проверку, сообщение называет шаг и поле.",
    body: NewStepGraph,
    responses: { 201: ok(StepGraphSaved, "Сохранена"), 404: err("Нет ветки") },
  },
  {
    operationId: "activateStepGraphVersion",
    method: "post",
    path: "/v1/clinic/branches/{code}/steps/versions/{version}/activate",
    tag: "clinic-settings",
    summary: "Сделать версию графа активной",
    description:
      "Делает версию графа шагов активной; диалоги в середине графа продолжают по новой версии со следующего хода.",
    responses: { 200: ok(StepGraphSaved), 404: err("Нет версии") },
  },
  {
    operationId: "listKbDocuments",
    method: "get",
    path: "/v1/clinic/kb/documents",
    tag: "clinic-kb",
    summary: "Документы базы знаний",
    description:
      "Документы базы знаний клиники арендатора (без текста): версия, число фрагментов, ветка. Демо-документы — с id demo-….",
    responses: { 200: ok(KbDocuments) },
  },
  {
    operationId: "putKbDocument",
    method: "post",
    path: "/v1/clinic/kb/documents",
    tag: "clinic-kb",
    summary: "Загрузить (заменить) документ: разбивка и индекс в одной транзакции",
    description:
      "Документ (Markdown или текст) делится на фрагменты по заголовкам и абзацам и индексируется полнотекстово (русский) в той же транзакции. Тот же id — новая версия.",
    body: KbDocumentBody,
    responses: { 201: ok(KbDocumentIndexed, "Проиндексирован") },
  },
  {
    operationId: "getKbDocument",
    method: "get",
    path: "/v1/clinic/kb/documents/{id}",
    tag: "clinic-kb",
    summary: "Документ с текстом",
    description: "Документ базы знаний с полным текстом.",
    responses: { 200: ok(KbDocument), 404: err("Нет документа") },
  },
  {
    operationId: "deleteKbDocument",
    method: "delete",
    path: "/v1/clinic/kb/documents/{id}",
    tag: "clinic-kb",
    summary: "Удалить документ",
    description: "Удаляет документ и его фрагменты; следующие ходы их не найдут.",
    responses: { 204: { description: "Удалён" }, 404: err("Нет документа") },
  },
  {
    operationId: "listKbChunks",
    method: "get",
    path: "/v1/clinic/kb/documents/{id}/chunks",
    tag: "clinic-kb",
    summary: "Фрагменты документа, как они проиндексированы",
    description: "Фрагменты документа в том виде, в каком их находит поиск: порядок, заголовок раздела, текст.",
    responses: { 200: ok(KbChunks), 404: err("Нет документа") },
  },
  {
    operationId: "reindexKbDocument",
    method: "post",
    path: "/v1/clinic/kb/documents/{id}/reindex",
    tag: "clinic-kb",
    summary: "Переразметить документ",
    description: "Заново делит сохранённый текст документа на фрагменты (например, после смены правил разбивки).",
    responses: { 200: ok(KbDocumentIndexed), 404: err("Нет документа") },
  },
  {
    operationId: "reindexKb",
    method: "post",
    path: "/v1/clinic/kb/reindex",
    tag: "clinic-kb",
    summary: "Переразметить всю базу",
    description: "Переразмечает все документы арендатора в одной транзакции.",
    responses: { 200: ok(KbReindexed) },
  },
  {
    operationId: "removeKbDemo",
    method: "delete",
    path: "/v1/clinic/kb/demo",
    tag: "clinic-kb",
    summary: "Удалить демо-базу знаний (документы demo-…)",
    description:
      "Демо-документы (адрес, часы, цены) загружаются при первом запуске на новой папке данных; этот вызов удаляет их все, свои документы не трогает.",
    responses: { 200: ok(KbDemoResult, "Сколько демо-документов удалено") },
  },
  {
    operationId: "loadKbDemo",
    method: "post",
    path: "/v1/clinic/kb/demo",
    tag: "clinic-kb",
    summary: "Загрузить демо-базу знаний заново",
    description: "Пишет (или перезаписывает) демо-документы demo-… с их фрагментами в одной транзакции.",
    responses: { 201: ok(KbDemoResult, "Сколько демо-документов загружено") },
  },
  {
    operationId: "searchKb",
    method: "get",
    path: "/v1/clinic/kb/search",
    tag: "clinic-kb",
    summary: "Поиск фрагментов (как для ветки)",
    description:
      "Те же фрагменты, что получила бы ветка на этот вопрос (ранжирование ts_rank_cd по русским лексемам), без памяти диалога.",
    query: KbSearchQuery,
    responses: { 200: ok(KbSearchResult) },
  },
];

/** The clinic's part of the wire contract, as the gateway documents it (systems/clinic/index.ts). */
export const clinicContract: SystemContract = {
  operations: clinicOperations,
  schemas: clinicSchemas,
  sseEvent: ClinicSseEvent,
  tags: [
    { name: "clinic", description: "Чат пациента" },
    { name: "clinic-settings", description: "Ветки, версии промптов, графы шагов" },
    { name: "clinic-kb", description: "База знаний" },
  ],
  // Settings and knowledge-base writes (reads of the same resources are the operator's).
  adminPaths: /^\/v1\/clinic\/(branches|kb|desk)(\/|$)/,
  inboxList: {
    operationId: "listClinicThreads",
    path: "/v1/clinic/threads",
    summary: "Диалоги клиники (как /v1/inbox/conversations?system=clinic)",
    description: "Диалоги клиники по убыванию последней активности, постранично (`cursor` из предыдущего ответа).",
  },
};
