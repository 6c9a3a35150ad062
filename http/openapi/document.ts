import { z } from "zod";
import {
  AnswerReplaced,
  DiagramGraph,
  DiagramQuery,
  ErrorBody,
  Health,
  Readiness,
  machineSchemas,
  ReplayQuery,
  ReplayReport,
  IssuedCredential,
  ResumeQuery,
  RunStages,
  StageEvent,
  err,
  ok,
  type Operation,
  type SystemContract,
} from "../contract";
import { inboxOperations, inboxSchemas, systemListOperation } from "../inbox-contract";
import { conversationKinds } from "../../driver/system";
import { inboxToolOperations, inboxToolSchemas } from "../../contract/inbox-tools";
import { webhookOperations, webhookSchemas } from "../../contract/webhooks";
import { describeComponents, exampleOf } from "./examples";
import { CONVERSATION_TOKEN_HEADER, CONVERSATION_TOKEN_QUERY } from "../conversation-access";

/**
 * The OpenAPI 3.1 document, generated from the zod contracts (http/contract.ts and each
 * system's contract.ts, read from the list of systems served) with zod 4's `z.toJSONSchema`:
 * every body and event schema is the one
 * the code parses or emits with. Named shapes become components; a body without a name gets
 * one from its operation. Any /v1 route the server has that no operation describes still
 * appears, marked undocumented, so the document never hides an endpoint.
 */

/** The shared operations; `resumeRun` streams any served system's events, `listMachines` lists their machines. */
const httpOperations = (AnyRunEvent: z.ZodType, MachineList: z.ZodType): Operation[] => [
  {
    operationId: "health",
    method: "get",
    path: "/healthz",
    tag: "service",
    summary: "Готовность сервера",
    description:
      "Жив ли процесс: 200 `{status: ok}`, как только сервер принимает запросы. Базу не проверяет — для этого /readyz.",
    responses: { 200: ok(Health) },
  },
  {
    operationId: "ready",
    method: "get",
    path: "/readyz",
    tag: "service",
    summary: "Готовность принимать трафик (для балансировщика)",
    description:
      "200, когда база данных отвечает и процесс не останавливается; 503 во время остановки (SIGTERM: ходы дозавершаются) или без базы — балансировщик отличает остановку от падения.",
    responses: { 200: ok(Readiness), 503: ok(Readiness, "Не готов: status stopping или unavailable") },
  },
  {
    operationId: "metrics",
    method: "get",
    path: "/metrics",
    tag: "service",
    summary: "Метрики Prometheus (ходы, вызовы модели, потоки, пул базы, процесс)",
    description:
      "Счётчики и гистограммы в текстовом формате Prometheus: ходы и их фазы, вызовы модели по ролям, открытые потоки, пул базы. Без токена, без идентификаторов и текстов.",
    responses: { 200: { description: "Prometheus text exposition format", other: ["text/plain"] } },
  },
  {
    operationId: "openapi",
    method: "get",
    path: "/openapi.json",
    tag: "service",
    summary: "Этот документ",
    description:
      "Документ OpenAPI 3.1, собранный из zod-схем, которыми сервер разбирает запросы и проверяет ответы; генераторы клиентов (openapi-typescript) берут его как есть.",
    responses: { 200: ok(z.record(z.string(), z.unknown()), "OpenAPI 3.1") },
  },
  {
    operationId: "getRunStages",
    credential: "required",
    method: "get",
    path: "/v1/runs/{runId}/stages",
    tag: "runs",
    summary: "Отладочные стадии сохранённого запуска",
    description:
      "Стадии (`stage`), записанные, если ход шёл с `debug: true`: RAG-фрагменты, собранный промпт, разбор хвоста.",
    responses: { 200: ok(RunStages), 404: err("Нет такого запуска") },
  },
  {
    operationId: "resumeRun",
    credential: "required",
    method: "get",
    path: "/v1/runs/{runId}/events",
    tag: "runs",
    summary: "Возобновить поток запуска",
    query: ResumeQuery,
    description:
      "Заголовок `Last-Event-ID` (или `?lastEventId=`): все события после этого id, затем живые — до `done`.",
    responses: {
      200: { description: "События запуска (любой системы)", sse: AnyRunEvent },
      204: {
        description:
          "Запуск закончен и после Last-Event-ID ничего нет, или (Accept: text/event-stream) такого запуска нет: EventSource останавливается",
      },
      400: err("Last-Event-ID дальше последнего события запуска (details.reason last_event_id_past_end)"),
      404: err("Нет такого запуска"),
    },
  },
  {
    operationId: "inspectEvents",
    method: "get",
    path: "/v1/inspect/events",
    tag: "machines",
    summary: "События инспекции Stately по SSE (STATELY_INSPECT=true)",
    description:
      "Для /inspector.html; EventSource передаёт токен как `?access_token=`. Каждое событие `inspect`: @xstate.actor / @xstate.event / @xstate.snapshot.",
    responses: { 200: { description: "event: inspect", other: ["text/event-stream"] }, 404: err("Инспектор выключен") },
  },
  {
    operationId: "issueConversationCredential",
    credential: "issued",
    method: "post",
    path: "/v1/conversations/{conversationId}/credential",
    tag: "conversations",
    summary: "Новый ключ диалога (X-Conversation-Token) — для диалога, созданного до ключей, или взамен потерянного",
    description:
      "Только admin. Выдаёт диалогу новый ключ; прежний (если был) перестаёт действовать. Ключ показывается один раз, хранится только его хэш. " +
      "Так диалоги, созданные до появления ключей, переводятся на ключи (doc/api.md «Conversation credentials»).",
    responses: {
      201: ok(IssuedCredential, "Выдан"),
      404: err("Нет диалога (details.reason conversation_not_found)"),
    },
  },
  {
    operationId: "listMachines",
    method: "get",
    path: "/v1/machines",
    tag: "machines",
    summary: "Машины, которые умеет рисовать сервер",
    description:
      "Идентификаторы и названия машин состояний всех систем, для которых сервер рисует схему (/v1/machines/{machineId}/diagram).",
    responses: { 200: ok(MachineList) },
  },
  {
    operationId: "replayConversation",
    method: "get",
    path: "/v1/conversations/{conversationId}/replay",
    tag: "machines",
    query: ReplayQuery,
    summary:
      "Проверка воспроизводимости: каждый снимок машины диалога пересобран из журнала её событий и сравнён с сохранённым",
    description:
      "Для каждого снимка: сколько событий в журнале, какими определениями машины они приняты, удалось ли воспроизвести и совпал ли результат. С `?key=` — один снимок, с журналом и обоими снимками.",
    responses: { 200: ok(ReplayReport), 404: err("Нет диалога или снимка") },
  },
  {
    operationId: "getMachineDiagram",
    method: "get",
    path: "/v1/machines/{machineId}/diagram",
    tag: "machines",
    query: DiagramQuery,
    summary: "Схема машины из её определения; текущее состояние диалога подсвечено",
    description:
      "Схема строится из определения машины (раскладка elkjs). С `conversationId` подсвечено текущее состояние этого диалога.",
    responses: {
      200: {
        description: "SVG (по умолчанию), JSON-граф (format=json) или HTML-страница (format=html)",
        json: DiagramGraph,
        other: ["image/svg+xml", "text/html"],
      },
      404: err("Нет машины или диалога"),
    },
  },
];

/** What the document is built from: the shared contract, the inbox and every served system's contract. */
interface Parts {
  operations: Operation[];
  schemas: Record<string, z.ZodType>;
  tags: { name: string; description: string }[];
}

/** What the document reads of a served system: its contract, and its conversation kinds (filters, the machine catalog). */
export type DocumentedSystem = { contract: SystemContract; kinds: readonly string[] };

function parts(systems: readonly DocumentedSystem[]): Parts {
  const contracts = systems.map((s) => s.contract);
  const events = contracts.map((c) => c.sseEvent);
  // A resumed run is one of any system's runs.
  const AnyRunEvent = events.length === 1 ? events[0]! : z.union(events as [z.ZodType, z.ZodType, ...z.ZodType[]]);
  const kinds = conversationKinds(systems);
  const { MachineSummary, MachineList } = machineSchemas(kinds);
  return {
    operations: [
      ...httpOperations(AnyRunEvent, MachineList),
      ...inboxOperations(kinds),
      ...contracts.flatMap((c) => (c.inboxList ? [systemListOperation(c.inboxList)] : [])),
      ...inboxToolOperations,
      ...webhookOperations,
      ...contracts.flatMap((c) => c.operations),
    ],
    schemas: Object.assign(
      {
        Error: ErrorBody,
        Health,
        Readiness,
        StageEvent,
        AnswerReplaced,
        RunStages,
        AnyRunEvent,
        MachineSummary,
        MachineList,
        DiagramGraph,
        ReplayReport,
        ...inboxSchemas,
        ...inboxToolSchemas,
        ...webhookSchemas,
      },
      ...contracts.map((c) => c.schemas),
    ),
    tags: [
      { name: "inbox", description: "Обращения: список диалогов, взять / вернуть / закрыть, удаление" },
      { name: "webhooks", description: "Исходящий вебхук: недоставленные события и повторная отправка" },
      ...contracts.flatMap((c) => c.tags),
      { name: "runs", description: "Возобновление потоков" },
      { name: "conversations", description: "Ключи диалогов (X-Conversation-Token)" },
      { name: "machines", description: "Схемы машин" },
      { name: "service", description: "Служебное" },
    ],
  };
}

/**
 * Every operation the gateway serves for these systems, as documented: the conversation-access
 * middleware (http/conversation-access.ts) reads which of them need a conversation's credential.
 */
export const documentedOperations = (systems: readonly DocumentedSystem[]): Operation[] => parts(systems).operations;

/** Errors any /v1 operation may answer besides its own (auth, body checks and limits, a crash). */
const commonErrors: Record<number, string> = {
  400: "invalid_request: тело, параметры или заголовки не прошли проверку",
  401: "unauthorized: нет или неверный токен (API_TOKENS)",
  403: "forbidden: у токена нет нужной роли (API_TOKENS role=…)",
  413: "payload_too_large: тело больше лимита",
  500: "internal: внутренняя ошибка; данные не изменены",
  503: "unavailable: сервер останавливается (SIGTERM) и новых запросов не берёт — повторите через Retry-After секунд (другой процесс примет); storage_unavailable: база данных недоступна, не ответила в срок или на диске нет места — ничего не сохранено, повторите через Retry-After секунд (ход — с тем же Idempotency-Key)",
};

/** Headers every response carries; a run-starting response adds the run's ids before its first event. */
const REQUEST_ID_HEADER = {
  "X-Request-Id": {
    description: "the request's id (the client's own when it sent a valid one), as in the server's log",
    schema: { type: "string" },
  },
};
const RUN_HEADERS = {
  // Required: every run-starting 200 carries them (http/sse.ts, http/turn-begin.ts replay), so a
  // generated client types them as strings it can read, not as maybe-absent.
  "X-Run-Id": {
    description: "the run this request started (or replayed): resume it by GET /v1/runs/{runId}/events",
    required: true,
    schema: { type: "string" },
  },
  "X-Conversation-Id": {
    description: "the conversation the run belongs to",
    required: true,
    schema: { type: "string" },
  },
};

/** A 503 always says when to come back (http/retry-after.ts); a 409 does when the conversation is busy. */
const RETRY_AFTER_503 = {
  "Retry-After": {
    description: "seconds to wait before sending the same request again (to this process or another)",
    required: true,
    schema: { type: "integer", minimum: 1, examples: [5] },
  },
};
const RETRY_AFTER_409 = {
  "Retry-After": {
    description:
      "sent with details.reason conversation_busy: seconds until the conversation's running turn is likely done; absent for other conflicts (retrying as is will not help)",
    required: false,
    schema: { type: "integer", minimum: 1, examples: [2] },
  },
};
const CONVERSATION_TOKEN_RESPONSE = {
  [CONVERSATION_TOKEN_HEADER]: {
    description:
      "the new conversation's credential, as the body's `conversationToken`: a `chat` client sends it back as X-Conversation-Token",
    required: true,
    schema: { type: "string" },
  },
};
const REPLAYED_HEADER = {
  "Idempotent-Replayed": {
    description:
      "true when this response replays the run an earlier request with the same Idempotency-Key started (no second turn); absent on a new run",
    required: false,
    schema: { type: "string", enum: ["true"] },
  },
};
const SSE_HEADERS = {
  "X-Accel-Buffering": {
    description: "no: asks a buffering proxy (nginx) to pass each event on at once",
    required: false,
    schema: { type: "string", enum: ["no"] },
  },
};

const strip = (s: Record<string, unknown>) => {
  const { $schema: _s, $id: _i, ...rest } = s;
  return rest;
};
const pascal = (id: string) => id[0]!.toUpperCase() + id.slice(1);
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * Every response body and event schema as components, named where the contracts name them,
 * else after the operation (`GetRunStages200`). Generated as the server sends them (`output`).
 */
function responseComponents({ operations, schemas: named }: Parts): {
  names: Map<z.ZodType, string>;
  schemas: Record<string, unknown>;
} {
  const names = new Map<z.ZodType, string>();
  for (const [name, schema] of Object.entries(named)) if (!names.has(schema)) names.set(schema, name);
  for (const op of operations)
    for (const [status, r] of Object.entries(op.responses)) {
      const s = r.sse ?? r.json;
      if (s && !names.has(s)) names.set(s, `${pascal(op.operationId)}${status}`);
    }
  const reg = z.registry<{ id: string }>();
  for (const [schema, id] of names) reg.add(schema, { id });
  const out = z.toJSONSchema(reg, {
    uri: (id) => `#/components/schemas/${id}`,
    io: "output",
    unrepresentable: "any",
  }) as { schemas: Record<string, Record<string, unknown>> };
  return { names, schemas: Object.fromEntries(Object.entries(out.schemas).map(([k, v]) => [k, strip(v)])) };
}

/** Request bodies and queries as the server accepts them (`input`: defaults optional), inlined. */
const inline = (schema: z.ZodType) =>
  strip(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>);

/** A request body's media type with an example built from its schema (examples.ts). */
const requestMedia = (schema: Record<string, unknown>, components: Record<string, unknown>) => ({
  schema,
  example: exampleOf(schema, components),
});

export function buildOpenApi(
  systems: readonly DocumentedSystem[],
  routes: { method: string; path: string }[] = [],
): Record<string, unknown> {
  const doc = parts(systems);
  const { names, schemas } = responseComponents(doc);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of doc.operations) {
    const params: Record<string, unknown>[] = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    if (op.query) {
      const q = inline(op.query) as { properties?: Record<string, { description?: string }>; required?: string[] };
      for (const [name, schema] of Object.entries(q.properties ?? {}))
        params.push({
          name,
          in: "query",
          required: (q.required ?? []).includes(name),
          ...(schema.description ? { description: schema.description } : {}),
          schema,
        });
    }
    // A POST that answers with a run's event stream starts a run: a retry with the same key is
    // the same run (turn-begin.ts), never a second turn.
    const startsRun = op.method === "post" && Object.values(op.responses).some((r) => r.sse);
    if (startsRun || op.headers?.idempotencyKey)
      params.push({
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description:
          op.headers?.idempotencyKey ??
          "a retry with the same key and body replays the same run (never a second turn); the same key with another body is 409 idempotency_key_reused",
        schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,200}$" },
      });
    if (op.operationId === "resumeRun" || op.headers?.lastEventId)
      params.push({
        name: "Last-Event-ID",
        in: "header",
        required: false,
        description: "the id of the last event the client has",
        schema: { type: "string", pattern: "^\\d+$" },
      });
    if (op.credential === "required") {
      params.push({
        name: CONVERSATION_TOKEN_HEADER,
        in: "header",
        required: false,
        description:
          "the conversation's credential (its creation's `conversationToken`): required with a `chat` token — without it, or with another, 404 as for a missing conversation; operator and admin tokens need none",
        schema: { type: "string" },
      });
      if (op.method === "get" && Object.values(op.responses).some((r) => r.sse))
        params.push({
          name: CONVERSATION_TOKEN_QUERY,
          in: "query",
          required: false,
          description: `instead of the ${CONVERSATION_TOKEN_HEADER} header, for an EventSource (it cannot set headers); refused on routes that are not event streams`,
          schema: { type: "string" },
        });
    }
    const errors = op.path.startsWith("/v1/") ? commonErrors : { 413: commonErrors[413]! };
    const all: Record<number, { description: string; json?: z.ZodType; sse?: z.ZodType; other?: string[] }> = {
      ...Object.fromEntries(Object.entries(errors).map(([s, d]) => [s, err(d)])),
      ...op.responses,
    };
    // The one 404 of a conversation a `chat` client may not reach: the same body as a missing one.
    if (op.credential === "required")
      all[404] = err(
        `${all[404]?.description ?? "Нет диалога"}; для токена chat — и без ключа диалога (${CONVERSATION_TOKEN_HEADER}) или с чужим: то же тело, что у несуществующего`,
      );
    const responses = Object.fromEntries(
      Object.entries(all).map(([status, r]) => {
        const content: Record<string, unknown> = {};
        if (r.sse) content["text/event-stream"] = { schema: ref(names.get(r.sse)!) };
        if (r.json) content["application/json"] = { schema: ref(names.get(r.json)!) };
        for (const t of r.other ?? []) content[t] = { schema: { type: "string" } };
        const headers = {
          ...REQUEST_ID_HEADER,
          ...(r.sse && (startsRun || op.operationId === "resumeRun") ? RUN_HEADERS : {}),
          // A finished run's 204 names the run too, when it exists (an unknown run's 204 cannot).
          ...(op.operationId === "resumeRun" && status === "204"
            ? Object.fromEntries(Object.entries(RUN_HEADERS).map(([k, h]) => [k, { ...h, required: false }]))
            : {}),
          ...(r.sse && startsRun ? REPLAYED_HEADER : {}),
          ...(r.sse ? SSE_HEADERS : {}),
          ...(status === "503" ? RETRY_AFTER_503 : status === "409" ? RETRY_AFTER_409 : {}),
          ...(op.credential === "issued" && status === "201" ? CONVERSATION_TOKEN_RESPONSE : {}),
        };
        return [status, { description: r.description, headers, ...(Object.keys(content).length ? { content } : {}) }];
      }),
    );
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      operationId: op.operationId,
      tags: [op.tag],
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      ...(params.length ? { parameters: params } : {}),
      ...(op.body
        ? { requestBody: { required: true, content: { "application/json": requestMedia(inline(op.body), schemas) } } }
        : {}),
      responses,
      security: op.path.startsWith("/v1/") ? [{ bearer: [] }] : [],
    };
  }
  // Routes the server has but no operation describes: listed, not hidden.
  for (const r of routes) {
    if (!r.path.startsWith("/v1/") || r.method === "ALL") continue;
    const path = r.path.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}");
    const method = r.method.toLowerCase();
    if (paths[path]?.[method]) continue;
    paths[path] ??= {};
    paths[path]![method] = {
      tags: ["undocumented"],
      summary: "Не описано в OpenAPI (маршрут есть на сервере)",
      "x-undocumented": true,
      responses: { default: { description: "см. CONTRACT.md" } },
      security: [{ bearer: [] }],
    };
  }
  describeComponents(schemas, paths as Record<string, Record<string, Record<string, unknown>>>);
  return {
    openapi: "3.1.0",
    info: {
      title: "Dialogue statecharts API",
      version: "0.1.0",
      description:
        "Клиника (CONTRACT §5), Workbench (§3), evidence workflow, запуски и SSE (§2), схемы машин. Ошибки — `{error: {code, message}}` (§6).",
      license: { name: "UNLICENSED", identifier: "UNLICENSED" },
    },
    servers: [{ url: "/" }],
    tags: doc.tags,
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "API_TOKENS; без них API открыт только на loopback" },
      },
    },
  };
}
