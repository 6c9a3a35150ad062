import { z } from "zod";
import { errorStatus, type ErrorCode } from "./errors";

/**
 * The wire shapes every system shares (CONTRACT §2, §6), as zod schemas: routes parse with
 * them, `Run.emit` is typed by them, and the OpenAPI document (http/openapi/document.ts) is
 * generated from them. Each system's own shapes live in `systems/<name>/contract.ts`.
 */

const errorCodes = Object.keys(errorStatus) as [ErrorCode, ...ErrorCode[]];

// ---- errors (CONTRACT §6) ----
export const ErrorBody = z.object({
  error: z.object({
    code: z.enum(errorCodes),
    message: z.string().describe("clear, user-showable text (Russian)"),
    details: z
      .unknown()
      .optional()
      .describe("machine-readable detail: zod issues, duplicate identities, a conflict reason"),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

// ---- run events (CONTRACT §2) ----
export const RunStarted = z.object({
  runId: z.string(),
  conversationId: z.string().optional(),
  threadId: z.string().optional().describe("the clinic names its conversation threadId"),
  interactionId: z.string().optional(),
  planVersion: z.number().int().optional(),
});
export const StageEvent = z.object({
  stageId: z.string().regex(/^\d\d$/),
  name: z.string(),
  status: z.enum(["ok", "skipped", "failed"]),
  durationMs: z.number(),
  data: z.unknown(),
});
export const TokenEvent = z.object({ delta: z.string() });
/** doc/streaming.md: the client discards every `token` of this run and shows `text`; `final` follows. */
export const AnswerReplaced = z.object({
  text: z.string().describe("the authoritative answer; equals final's answer text"),
  reason: z
    .enum(["validation_failed", "model_failed"])
    .describe(
      "validation_failed: a checker rejected the model's text; model_failed: the model's stream ended unusable after text was released",
    ),
  issues: z.array(z.string()).describe("why, one issue per string (`code` or `code: detail`)"),
});
export const ErrorEvent = z.object({ code: z.string().describe("a code of CONTRACT §6"), message: z.string() });
export const DoneEvent = z.object({});

/** The events every run may carry, whatever its system (http/sse.ts, driver/run.ts `fail`). */
export const runEvents = {
  run_started: RunStarted,
  stage: StageEvent,
  token: TokenEvent,
  error: ErrorEvent,
  done: DoneEvent,
};

/** Event name → zod schema of its `data`; a system's map extends `runEvents`. */
export type EventSchemas = Record<string, z.ZodType>;
/** Event name → payload type, the map `Run<E>` is typed by. */
export type EventsOf<S extends EventSchemas> = { [K in keyof S]: z.infer<S[K]> };

/**
 * Each dialogue system's run events (name → payload), by system name. Empty here: each system's
 * contract/<name>/contract.ts adds its own entry (`declare module "../http" { interface
 * SystemEvents { <name>: <Name>Events } }`), so the union of any run's events (client/events.ts
 * `AnyRunEvent`) is read from the systems' contracts and names none of them.
 */
export interface SystemEvents {}

/** One SSE event as a client parses it: name, id, data. */
const envelope = (name: string, data: z.ZodType) =>
  z.object({ event: z.literal(name), id: z.string().describe("increasing within the run (Last-Event-ID)"), data });

/** The union of a system's events as `{event, id, data}` objects (the OpenAPI stream schema). */
export function sseUnion(events: EventSchemas) {
  const members = Object.entries(events).map(([name, data]) => envelope(name, data));
  return z.discriminatedUnion("event", members as [ReturnType<typeof envelope>, ...ReturnType<typeof envelope>[]]);
}

// ---- runs (CONTRACT §2: resume) ----
export const RunParams = z.object({ runId: z.string() });
export const ResumeQuery = z.object({
  lastEventId: z
    .string()
    .regex(/^\d+$/, "Last-Event-ID должен быть неотрицательным целым.")
    .optional()
    .describe("instead of the Last-Event-ID header (EventSource cannot set headers on a new URL)"),
});
export const RunStages = z.object({ runId: z.string(), stages: z.array(StageEvent) });

// ---- service ----
export const Health = z.object({ status: z.literal("ok") });
/** GET /readyz (http/observability/routes.ts): 200 ready; 503 while draining or when the database does not answer. */
export const Readiness = z.object({
  status: z.enum(["ready", "stopping", "unavailable"]),
  database: z.enum(["ok", "unchecked", "unreachable"]),
  latencyMs: z.number().optional().describe("the database's answer to a ping"),
});
const conversationToken = z
  .string()
  .describe(
    "the conversation's own credential: send it as X-Conversation-Token (an EventSource: ?conversation_token=) to read, follow and write this conversation with a `chat` token; shown once, only its hash is stored",
  );
export const Created = {
  thread: z.object({ threadId: z.string(), conversationToken }),
  conversation: z.object({ conversationId: z.string(), conversationToken }),
};
/** POST /v1/conversations/{conversationId}/credential (admin): a new credential; the previous one stops working. */
export const IssuedCredential = z.object({
  conversationId: z.string(),
  kind: z.string(),
  conversationToken,
  replaced: z.boolean().describe("true: the conversation had a credential, which no longer works"),
});

// ---- operations: what the OpenAPI document is generated from ----
export interface Response {
  description: string;
  /** JSON body. */
  json?: z.ZodType;
  /** A `text/event-stream` of these events (an `sseUnion`). */
  sse?: z.ZodType;
  /** Other content types of the same response (e.g. SVG, HTML): described as strings. */
  other?: string[];
}

export interface Operation {
  operationId: string;
  method: "get" | "post" | "put" | "delete";
  path: string;
  tag: string;
  summary: string;
  description?: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  /**
   * Request headers besides those the document derives (a POST answering with a run's stream
   * takes Idempotency-Key; resumeRun takes Last-Event-ID): e.g. an operator's message is
   * idempotent by key, a thread's event stream resumes by Last-Event-ID.
   */
  headers?: { idempotencyKey?: string; lastEventId?: boolean };
  /**
   * The conversation's own credential (issue 47, http/conversation-access.ts). `issued`: the
   * operation creates a conversation and answers with its credential (body `conversationToken`,
   * header X-Conversation-Token). `required`: the operation reads, follows or writes one
   * conversation (named in its path, or through a run or interaction of it) — a `chat` token must
   * present that conversation's credential, else 404 as for a missing one. The gateway's
   * middleware reads this list: documenting an operation as `required` is what enforces it.
   */
  credential?: "issued" | "required";
  /**
   * `chat`: a patient's or user's client may call it (a `chat` token: http/roles.ts builds its
   * rules from the served systems' operations, so documenting a system's operation as `chat` is
   * what opens it). Absent: an `operator` token at least.
   */
  role?: "chat";
  /** Success and error responses by status; the errors every /v1 operation shares are added by the document. */
  responses: Record<number, Response>;
}

/** A dialogue system's part of the wire contract (its contract.ts): what /openapi.json documents for it. */
export interface SystemContract {
  operations: Operation[];
  /** Named shapes (OpenAPI components). */
  schemas: Record<string, z.ZodType>;
  /** Every SSE event the system's runs send (a resumed run may be any system's). */
  sseEvent: z.ZodType;
  /** OpenAPI tags its operations use, in the order the document lists them. */
  tags: { name: string; description: string }[];
  /** Writes under these paths need an `admin` token (the system's settings, its knowledge base): http/roles.ts. */
  adminPaths?: RegExp;
  /**
   * Its conversations as the operators' inbox lists them, at a path of its own (GET `path`, the
   * same as /v1/inbox/conversations?system=<its name>): http/routes/inbox.ts serves it and the
   * document describes it (contract/inbox.ts `systemListOperation`).
   */
  inboxList?: { operationId: string; path: string; summary: string; description: string };
}

export const ok = (json: z.ZodType, description = "OK"): Response => ({ description, json });
export const err = (description: string): Response => ({ description, json: ErrorBody });

// ---- machines (operator) ----
/**
 * One machine of the catalog. `conversationKind` is one of the served systems' kinds: the
 * document narrows it to them (`machineSchemas`), since this contract names no system.
 */
export const MachineSummary = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  conversationKind: z.string(),
  machineId: z.string(),
  states: z.number().int(),
  transitions: z.number().int(),
});
export const MachineList = z.object({ machines: z.array(MachineSummary) });
/** The catalog's schemas with `conversationKind` one of `kinds` (the served systems' conversation kinds). */
export function machineSchemas(kinds: readonly string[]) {
  const Summary = MachineSummary.extend({ conversationKind: z.enum(kinds as [string, ...string[]]) });
  return { MachineSummary: Summary, MachineList: z.object({ machines: z.array(Summary) }) };
}
export const DiagramQuery = z.object({
  conversationId: z.string().min(1).max(200).optional(),
  /** A particular snapshot of the conversation (e.g. `interaction:…`); default: its latest one. */
  key: z
    .string()
    .min(1)
    .max(300)
    .optional()
    .describe("a snapshot of the conversation (e.g. `interaction:…`); default: its latest one"),
  format: z.enum(["svg", "json", "html"]).default("svg"),
});
export const DiagramGraph = z.object({
  id: z.string(),
  machineId: z.string(),
  title: z.string(),
  caption: z.string(),
  active: z.array(z.string()).describe("ids of the conversation's active states"),
  states: z.array(z.record(z.string(), z.unknown())),
  transitions: z.array(z.record(z.string(), z.unknown())),
});
export const ReplayQuery = z.object({ key: z.string().min(1).max(300).optional() });
export const ReplayReport = z.object({
  conversationId: z.string(),
  kind: z.string(),
  machines: z.array(
    z.object({
      key: z.string(),
      machineId: z.string(),
      machineVersion: z.number().int(),
      rowVersion: z.number().int(),
      events: z.number().int().describe("entries in the snapshot's event log"),
      definitions: z
        .array(z.string().nullable())
        .describe("labels of the machine definitions that took them (null: logged before labels)"),
      replayed: z.boolean(),
      matches: z.boolean().nullable(),
      reason: z.string().optional(),
      log: z
        .array(
          z.object({
            seq: z.number().int(),
            machine: z.string().nullable(),
            runId: z.string().nullable(),
            event: z.unknown(),
          }),
        )
        .optional()
        .describe("with ?key="),
      stored: z.unknown().optional(),
      replayedSnapshot: z.unknown().optional(),
    }),
  ),
});
