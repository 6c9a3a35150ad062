import { z } from "zod";
import { DiagramQuery } from "../routes/operator-machines";
import { ReplayQuery } from "../routes/operator-replay";
import * as S from "./schemas";
import { InboxFilter } from "../../storage/inbox";

/**
 * The OpenAPI 3.1 document, generated from zod schemas with zod 4's `z.toJSONSchema`: shared
 * shapes become components (as the server returns them), request bodies are inlined as the
 * server accepts them (defaults optional). Any /v1 route the server has that is not described
 * here still appears, marked undocumented, so the document never hides an endpoint.
 */

type Res = { description: string; schema?: string; sse?: string; contentType?: string };
export interface Op {
  method: "get" | "post" | "delete";
  path: string;
  tag: string;
  summary: string;
  description?: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  responses: Record<string, Res>;
}

const err = (description: string): Res => ({ description, schema: "Error" });
const json = (schema: string, description = "OK"): Res => ({ description, schema });

export const operations: Op[] = [
  { method: "get", path: "/healthz", tag: "service", summary: "Готовность сервера", responses: { 200: { description: '{"status":"ok"}' } } },
  { method: "get", path: "/openapi.json", tag: "service", summary: "Этот документ", responses: { 200: { description: "OpenAPI 3.1" } } },
  { method: "get", path: "/v1/runs/{runId}/stages", tag: "runs", summary: "Отладочные стадии сохранённого запуска", description: "Стадии (`stage`), записанные, если ход шёл с `debug: true`: RAG-фрагменты, собранный промпт, разбор хвоста.", responses: { 200: { description: "{runId, stages: Stage[]}" }, 404: err("Нет такого запуска") } },
  { method: "get", path: "/v1/runs/{runId}/events", tag: "runs", summary: "Возобновить поток запуска", description: "Заголовок `Last-Event-ID` (или `?lastEventId=`): все события после этого id, затем живые — до `done`.", responses: { 200: { description: "События запуска", sse: "ClinicSseEvent" }, 404: err("Нет такого запуска") } },

  { method: "post", path: "/v1/clinic/threads", tag: "clinic", summary: "Новый диалог пациента", responses: { 201: { description: "{threadId}" } } },
  { method: "get", path: "/v1/clinic/threads/{threadId}", tag: "clinic", summary: "Состояние и сообщения диалога", responses: { 200: json("ClinicThread"), 404: err("Нет диалога") } },
  { method: "post", path: "/v1/clinic/threads/{threadId}/messages", tag: "clinic", summary: "Реплика пациента → поток SSE", body: S.ClinicMessageBody, responses: { 200: { description: "run_started, [stage], router_decision, token…, final, done", sse: "ClinicSseEvent" }, 400: err("Неверное тело"), 404: err("Нет диалога") } },
  { method: "post", path: "/v1/clinic/threads/{threadId}/release", tag: "clinic", summary: "Оператор возвращает переданный ему диалог боту", responses: { 200: { description: "{threadId, released: true, state}" }, 404: err("Нет диалога"), 409: err("Диалог не передан оператору") } },
  { method: "get", path: "/v1/clinic/branches", tag: "clinic-settings", summary: "Активные настройки веток и графы шагов", responses: { 200: json("BranchSettings") } },
  { method: "get", path: "/v1/clinic/branches/{code}/versions", tag: "clinic-settings", summary: "Версии настроек ветки", responses: { 200: { description: "{versions: BranchVersionRow[]}" }, 404: err("Нет ветки") } },
  { method: "post", path: "/v1/clinic/branches/{code}/versions", tag: "clinic-settings", summary: "Новая версия настроек ветки", body: S.NewBranchVersion, responses: { 201: { description: "{code, version, active}" }, 400: err("Настройки не прошли проверку") } },
  { method: "post", path: "/v1/clinic/branches/{code}/versions/{version}/activate", tag: "clinic-settings", summary: "Сделать версию активной (в том числе откат)", responses: { 200: { description: "{code, version, active: true}" }, 404: err("Нет версии") } },
  { method: "get", path: "/v1/clinic/branches/{code}/steps/versions", tag: "clinic-settings", summary: "Версии графа шагов", responses: { 200: { description: "{versions: StepGraphVersionRow[]}" } } },
  { method: "post", path: "/v1/clinic/branches/{code}/steps", tag: "clinic-settings", summary: "Новая версия графа шагов (prompt, allowed_next, guards)", body: S.NewStepGraph, responses: { 201: { description: "{branch, version, active}" }, 400: err("Граф не прошёл проверку: сообщение называет шаг и поле") } },
  { method: "post", path: "/v1/clinic/branches/{code}/steps/versions/{version}/activate", tag: "clinic-settings", summary: "Сделать версию графа активной", responses: { 200: { description: "{branch, version, active: true}" }, 404: err("Нет версии") } },
  { method: "get", path: "/v1/clinic/kb/documents", tag: "clinic-kb", summary: "Документы базы знаний", responses: { 200: { description: "{documents: KbDocument[]}" } } },
  { method: "post", path: "/v1/clinic/kb/documents", tag: "clinic-kb", summary: "Загрузить (заменить) документ: разбивка и индекс в одной транзакции", body: S.KbDocumentBody, responses: { 201: { description: "{documentId, version, chunks}" }, 400: err("Неверное тело") } },
  { method: "get", path: "/v1/clinic/kb/documents/{id}", tag: "clinic-kb", summary: "Документ с текстом", responses: { 200: json("KbDocument"), 404: err("Нет документа") } },
  { method: "delete", path: "/v1/clinic/kb/documents/{id}", tag: "clinic-kb", summary: "Удалить документ", responses: { 204: { description: "Удалён" }, 404: err("Нет документа") } },
  { method: "get", path: "/v1/clinic/kb/documents/{id}/chunks", tag: "clinic-kb", summary: "Фрагменты документа, как они проиндексированы", responses: { 200: { description: "{documentId, version, chunks: KbChunk[]}" }, 404: err("Нет документа") } },
  { method: "post", path: "/v1/clinic/kb/documents/{id}/reindex", tag: "clinic-kb", summary: "Переразметить документ", responses: { 200: { description: "{documentId, version, chunks}" } } },
  { method: "post", path: "/v1/clinic/kb/reindex", tag: "clinic-kb", summary: "Переразметить всю базу", responses: { 200: { description: "{documents, chunks}" } } },
  { method: "get", path: "/v1/clinic/kb/search", tag: "clinic-kb", summary: "Поиск фрагментов (как для ветки)", query: z.object({ q: z.string(), branch: z.string().optional(), limit: z.coerce.number().int().max(20).optional() }), responses: { 200: { description: "{query, fragments: KbFragment[]}" } } },

  { method: "post", path: "/v1/workbench/conversations", tag: "workbench", summary: "Новый диалог Configurator", responses: { 201: { description: "{conversationId}" } } },
  { method: "get", path: "/v1/workbench/conversations/{id}", tag: "workbench", summary: "Сообщения и запросы диалога", responses: { 200: { description: "{conversationId, messages, interactions}" }, 404: err("Нет диалога") } },
  { method: "post", path: "/v1/workbench/conversations/{id}/messages", tag: "workbench", summary: "Сообщение → поток SSE (12 этапов при debug)", body: S.WorkbenchMessageBody, responses: { 200: { description: "run_started, [stage…], clarification_required | token…, [answer_replaced], final, done (doc/streaming.md)", sse: "WorkbenchSseEvent" }, 409: err("Уточнение уже отвечено или план устарел"), 422: err("unknown_candidate: id вне списка кандидатов") } },
  { method: "get", path: "/v1/workbench/interactions/{id}", tag: "workbench", summary: "Запрос (Interaction): статус, план, уточнения", responses: { 200: json("Interaction"), 404: err("Нет запроса") } },

  { method: "get", path: "/v1/workbench/sample-workspace", tag: "workbench", summary: "Встроенный пример снапшота (его берёт сервер, если сообщение пришло без workspace)", responses: { 200: json("WorkspaceSnapshot"), 404: err("Примера нет") } },

  { method: "post", path: "/v1/evidence/conversations", tag: "evidence", summary: "Новый диалог evidence workflow", responses: { 201: { description: "{conversationId}" } } },
  { method: "get", path: "/v1/evidence/conversations/{id}", tag: "evidence", summary: "Состояние разговора и сообщения", responses: { 200: { description: "{conversationId, state, last, messages}" }, 404: err("Нет диалога") } },
  { method: "post", path: "/v1/evidence/conversations/{id}/messages", tag: "evidence", summary: "Вопрос → поток SSE (стадии при debug)", body: S.ClinicMessageBody, responses: { 200: { description: "run_started, [stage…], token…, final, done" }, 404: err("Нет диалога") } },
  { method: "get", path: "/v1/evidence/runs/{runId}", tag: "evidence", summary: "Артефакты запуска: QueryFrame … FinalAnswerPackage", responses: { 200: { description: "{runId, conversationId, turn, question, outcome, reasonCodes, artifacts}" }, 404: err("Нет запуска") } },
  { method: "get", path: "/v1/evidence/tools", tag: "evidence", summary: "Инструменты подключённого MCP-сервера", description: "ready — сервер предлагает все инструменты контракта; missing — каких нет.", responses: { 200: { description: "{mcp, tools, expected, missing, ready}" } } },
  { method: "post", path: "/v1/evidence/mcp", tag: "evidence", summary: "Демо MCP-сервер (Streamable HTTP, без состояния)", responses: { 200: { description: "JSON-RPC MCP" } } },
  { method: "get", path: "/v1/stats/outcomes", tag: "evidence", summary: "Классы исходов и коды причин всех запусков", query: z.object({ kind: z.string().optional(), since: z.string().optional().describe("ISO 8601") }), responses: { 200: { description: "{byOutcome, byOutcomeClass, …}" } } },

  { method: "get", path: "/v1/inspect/events", tag: "machines", summary: "События инспекции Stately по SSE (STATELY_INSPECT=true)", description: "Для /inspector.html; EventSource передаёт токен как `?access_token=`.", responses: { 200: { description: "event: inspect — @xstate.actor / @xstate.event / @xstate.snapshot" }, 404: err("Инспектор выключен") } },
  { method: "get", path: "/v1/machines", tag: "machines", summary: "Машины, которые умеет рисовать сервер", responses: { 200: { description: "{machines: MachineSummary[]}" } } },
  { method: "get", path: "/v1/conversations/{conversationId}/replay", tag: "machines", summary: "Проверка воспроизводимости: каждый снимок машины диалога пересобран из журнала её событий и сравнён с сохранённым", description: "Для каждого снимка: сколько событий в журнале, какими определениями машины они приняты, удалось ли воспроизвести и совпал ли результат. С `?key=` — один снимок, с журналом и обоими снимками.", query: ReplayQuery, responses: { 200: { description: "{conversationId, kind, machines: [{key, machineId, events, definitions, replayed, matches, reason?}]}" }, 404: err("Нет диалога или снимка") } },
  { method: "get", path: "/v1/machines/{machineId}/diagram", tag: "machines", summary: "Схема машины из её определения; текущее состояние диалога подсвечено", query: DiagramQuery, responses: { 200: { description: "SVG (по умолчанию), JSON-граф или HTML-страница", contentType: "image/svg+xml" }, 404: err("Нет машины или диалога") } },
  { method: "get", path: "/v1/inbox/conversations", tag: "inbox", summary: "Обращения: диалоги всех систем, ждущие человека — первыми", description: "Курсорная пагинация: `nextCursor` из ответа → `?cursor=`. Фильтры: system, status (open|taken|closed), escalated, reason, from/to (по последней активности), q (текст сообщений, телефон, id).", query: InboxFilter, responses: { 200: { description: "{items: InboxItem[], nextCursor}" }, 400: err("Неверный фильтр или курсор") } },
  { method: "get", path: "/v1/inbox/conversations/{id}", tag: "inbox", summary: "Обращение с расшифровкой", responses: { 200: { description: "InboxItem + {state?, messages: [{seq, role, text, meta, createdAt}]}" }, 404: err("Нет диалога") } },
  { method: "post", path: "/v1/inbox/conversations/{id}/take", tag: "inbox", summary: "Оператор берёт диалог: бот до освобождения отвечает только просьбой подождать", responses: { 200: { description: "InboxItem" }, 404: err("Нет диалога"), 409: err("Взять можно только диалог клиники") } },
  { method: "post", path: "/v1/inbox/conversations/{id}/release", tag: "inbox", summary: "Вернуть диалог боту (снимает передачу оператору)", responses: { 200: { description: "InboxItem" }, 404: err("Нет диалога"), 409: err("Диалог не у оператора") } },
  { method: "post", path: "/v1/inbox/conversations/{id}/close", tag: "inbox", summary: "Закрыть обращение", responses: { 200: { description: "InboxItem" }, 404: err("Нет диалога") } },
  { method: "delete", path: "/v1/inbox/conversations/{id}", tag: "inbox", summary: "Удалить диалог и все его данные (право на удаление)", responses: { 204: { description: "Удалён" }, 404: err("Нет диалога"), 409: err("Идёт ход диалога") } },
  { method: "get", path: "/v1/clinic/threads", tag: "inbox", summary: "Диалоги клиники (как /v1/inbox/conversations?system=clinic)", query: InboxFilter.omit({ system: true }), responses: { 200: { description: "{items, nextCursor}" } } },
  { method: "get", path: "/v1/workbench/conversations", tag: "inbox", summary: "Диалоги Workbench (постранично)", query: InboxFilter.omit({ system: true }), responses: { 200: { description: "{items, nextCursor}" } } },
  { method: "get", path: "/v1/evidence/conversations", tag: "inbox", summary: "Диалоги Evidence (постранично)", query: InboxFilter.omit({ system: true }), responses: { 200: { description: "{items, nextCursor}" } } },
];

const strip = (s: Record<string, unknown>) => {
  const { $schema: _s, $id: _i, ...rest } = s;
  return rest;
};

function components(): Record<string, unknown> {
  const reg = z.registry<{ id: string }>();
  for (const [id, schema] of S.schemaNames) reg.add(schema, { id });
  const out = z.toJSONSchema(reg, { uri: (id) => `#/components/schemas/${id}`, io: "output", unrepresentable: "any" }) as { schemas: Record<string, Record<string, unknown>> };
  return Object.fromEntries(Object.entries(out.schemas).map(([k, v]) => [k, strip(v)]));
}

const inline = (schema: z.ZodType) => strip(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>);
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export function buildOpenApi(routes: { method: string; path: string }[] = []): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const params = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    if (op.query) {
      const q = inline(op.query) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(q.properties ?? {})) params.push({ name, in: "query", required: (q.required ?? []).includes(name), schema: schema as never });
    }
    const responses = Object.fromEntries(
      Object.entries(op.responses).map(([status, r]) => {
        const content = r.sse
          ? { "text/event-stream": { schema: ref(r.sse) } }
          : r.schema
            ? { "application/json": { schema: ref(r.schema) } }
            : r.contentType
              ? { [r.contentType]: { schema: { type: "string" } } }
              : undefined;
        return [status, { description: r.description, ...(content ? { content } : {}) }];
      }),
    );
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      tags: [op.tag],
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      ...(params.length ? { parameters: params } : {}),
      ...(op.body ? { requestBody: { required: true, content: { "application/json": { schema: inline(op.body) } } } } : {}),
      responses,
      ...(op.path.startsWith("/v1/") ? { security: [{ bearer: [] }] } : {}),
    };
  }
  // Routes the server has but this file does not describe yet: listed, not hidden.
  for (const r of routes) {
    if (!r.path.startsWith("/v1/") || r.method === "ALL") continue;
    const path = r.path.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}");
    const method = r.method.toLowerCase();
    if (paths[path]?.[method]) continue;
    paths[path] ??= {};
    paths[path]![method] = { tags: ["undocumented"], summary: "Не описано в OpenAPI (маршрут есть на сервере)", "x-undocumented": true, responses: { default: { description: "см. CONTRACT.md" } }, security: [{ bearer: [] }] };
  }
  return {
    openapi: "3.1.0",
    info: { title: "Dialogue statecharts API", version: "0.1.0", description: "Клиника (CONTRACT §5), Workbench (§3), запуски и SSE (§2), схемы машин. Ошибки — `{error: {code, message}}` (§6)." },
    servers: [{ url: "/" }],
    tags: [
      { name: "clinic", description: "Чат пациента" },
      { name: "inbox", description: "Обращения: список диалогов, взять / вернуть / закрыть, удаление" },
      { name: "clinic-settings", description: "Ветки, версии промптов, графы шагов" },
      { name: "clinic-kb", description: "База знаний" },
      { name: "workbench", description: "Configurator chat" },
      { name: "evidence", description: "Evidence workflow" },
      { name: "runs", description: "Возобновление потоков" },
      { name: "machines", description: "Схемы машин" },
      { name: "service", description: "Служебное" },
    ],
    paths,
    components: { schemas: components(), securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "API_TOKENS; без них API открыт только на loopback" } } },
  };
}
