import type { z } from "zod";
import type { Created, RunStages } from "../contract/http";
import type {
  AssignBody,
  InboxDetail,
  InboxItem,
  InboxList,
  OperatorList,
  OperatorMessage,
  OperatorMessageBody,
  TransferBody,
} from "../contract/inbox";
import type {
  Note as NoteSchema,
  NoteBody,
  NoteList,
  PresenceBody,
  QuickReply as QuickReplySchema,
  QuickReplyBody,
  QuickReplyList,
  ReminderList,
  ThreadPresence as ThreadPresenceSchema,
} from "../contract/inbox-tools";
import type { ClinicMessageBody, ClinicThread as ClinicThreadSchema } from "../contract/clinic/contract";
import type {
  EvidenceConversation as EvidenceConversationSchema,
  EvidenceMessageBody,
} from "../contract/evidence/contract";
import type {
  Interaction as InteractionSchema,
  WorkbenchConversation as WorkbenchConversationSchema,
  WorkbenchMessageBody,
} from "../contract/workbench/contract";
import { apiError, ConnectionError } from "./errors";
import type { ClinicEvent, EvidenceEvent, UntypedEvent, WorkbenchEvent } from "./events";
import { Turn, type SendOptions, type Transport } from "./turn";
import { followThread } from "./thread";

export * from "./errors";
export type * from "./events";
export { Turn, type SendOptions } from "./turn";
export { readEvents, type RawEvent } from "./sse";
export type { ThreadEvent, ThreadEvents } from "./thread";

export interface ClientOptions {
  /** e.g. http://127.0.0.1:3000 */
  baseUrl: string;
  /** Bearer token (API_TOKENS); omitted on an open loopback server. */
  token?: string;
  /** Another fetch (a test that cuts connections, a proxy agent). */
  fetch?: typeof fetch;
  /** Reconnects without progress before a send gives up; default 5. */
  maxRetries?: number;
  /** First retry delay, doubled each time; default 200 ms. */
  retryDelayMs?: number;
  /**
   * Where the conversations' credentials are kept (default: in memory, for this client's life).
   * A widget that reopens a conversation after a reload passes a store over localStorage.
   */
  credentials?: CredentialStore;
}

/**
 * Each conversation's own credential (X-Conversation-Token), by conversation id: `create()` puts
 * the one the server issued here, and every request about that conversation sends it. A `chat`
 * token reaches a conversation only with it (doc/clients.md); operator and admin tokens need none.
 */
export interface CredentialStore {
  get(conversationId: string): string | null | undefined;
  set(conversationId: string, credential: string): void;
}

/** The header a conversation's credential travels in. */
export const CONVERSATION_TOKEN_HEADER = "x-conversation-token";

// Bodies as the contracts declare them (type-only imports: the client carries no zod): what a
// client sends is a schema's input, what it reads is a schema's output as JSON.
export type ClinicThread = z.output<typeof ClinicThreadSchema>;
export type WorkbenchConversation = z.output<typeof WorkbenchConversationSchema>;
export type WorkbenchInteraction = z.output<typeof InteractionSchema>;
export type EvidenceConversation = z.output<typeof EvidenceConversationSchema>;
export type InboxPage = z.output<typeof InboxList>;
export type InboxConversation = z.output<typeof InboxDetail>;
export type InboxConversationItem = z.output<typeof InboxItem>;
export type OperatorMessageSent = z.output<typeof OperatorMessage>;
export type InboxOperators = z.output<typeof OperatorList>;
export type RunStagesBody = z.output<typeof RunStages>;
export type QuickReply = z.output<typeof QuickReplySchema>;
export type QuickReplyInput = z.input<typeof QuickReplyBody>;
export type InboxNote = z.output<typeof NoteSchema>;
export type ThreadPresence = z.output<typeof ThreadPresenceSchema>;
export type InboxReminders = z.output<typeof ReminderList>;
export type ClinicMessage = z.input<typeof ClinicMessageBody>;
export type WorkbenchMessage = z.input<typeof WorkbenchMessageBody>;
export type EvidenceMessage = z.input<typeof EvidenceMessageBody>;

/**
 * The typed client of the HTTP API (doc/clients.md). Every `send` is idempotent (a key per
 * send), resumes after a dropped connection and yields each event of the run once, in order.
 */
export function createClient(o: ClientOptions) {
  const baseUrl = o.baseUrl.replace(/\/+$/, "");
  const credentials: CredentialStore = o.credentials ?? new Map<string, string>();
  const t: Transport = {
    baseUrl,
    fetch: o.fetch ?? ((...a) => fetch(...a)),
    headers: (extra = {}, conversationId = null) => {
      const credential = conversationId ? credentials.get(conversationId) : null;
      return {
        ...extra,
        ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
        ...(credential ? { [CONVERSATION_TOKEN_HEADER]: credential } : {}),
      };
    },
    maxRetries: o.maxRetries ?? 5,
    retryDelayMs: o.retryDelayMs ?? 200,
  };

  async function call<T>(
    method: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
    conversationId?: string,
  ): Promise<T> {
    let res: Response;
    try {
      res = await t.fetch(`${baseUrl}${path}`, {
        method,
        headers: t.headers(
          { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...extra },
          conversationId,
        ),
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw new ConnectionError(baseUrl, e);
    }
    const json = res.status === 204 ? null : await res.json().catch(() => null);
    if (!res.ok) throw apiError(res.status, json);
    return json as T;
  }

  const q = (id: string) => encodeURIComponent(id);
  /** A creation's answer: its credential is kept for the conversation's later requests. */
  const keep =
    <T extends { conversationToken: string }>(id: (b: T) => string) =>
    (b: T) => {
      credentials.set(id(b), b.conversationToken);
      return b;
    };
  const withConversation = (conversationId: string, opts: SendOptions) => ({ ...opts, conversationId });

  return {
    baseUrl,
    call,
    /** The conversations' credentials this client holds (set one to reopen a conversation started elsewhere). */
    credentials,
    /** Any POST that starts a run (a route this client has no method for), idempotent and resuming like the others. */
    sendTo: <E extends UntypedEvent = UntypedEvent>(path: string, body: unknown, opts: SendOptions = {}) =>
      new Turn<E>(t, path, body, opts),
    clinic: {
      create: () => call<z.output<typeof Created.thread>>("POST", "/v1/clinic/threads").then(keep((b) => b.threadId)),
      /** The tenant's threads (the list endpoint; see the API page for its paging). */
      list: (query = "") => call<InboxPage>("GET", `/v1/clinic/threads${query}`),
      get: (threadId: string) =>
        call<ClinicThread>("GET", `/v1/clinic/threads/${q(threadId)}`, undefined, {}, threadId),
      send: (threadId: string, text: string, opts: SendOptions & { debug?: boolean } = {}) =>
        new Turn<ClinicEvent>(
          t,
          `/v1/clinic/threads/${q(threadId)}/messages`,
          { text, ...(opts.debug ? { debug: true } : {}) } satisfies ClinicMessage,
          withConversation(threadId, opts),
        ),
      /** The thread's live events (an operator's messages, take / release / close), from `after` on; reconnects itself. */
      events: (threadId: string, o: { after?: number; signal?: AbortSignal } = {}) => followThread(t, threadId, o),
    },
    /** The operators' side (role `operator`): a conversation, and taking, answering, releasing, closing it. */
    inbox: {
      list: (query = "") => call<InboxPage>("GET", `/v1/inbox/conversations${query}`),
      get: (id: string) => call<InboxConversation>("GET", `/v1/inbox/conversations/${q(id)}`),
      take: (id: string, operator?: string) =>
        call<InboxConversationItem>("POST", `/v1/inbox/conversations/${q(id)}/take`, operator ? { operator } : {}),
      /**
       * The operator's message to the patient; idempotent by `idempotencyKey` (a new one per
       * message by default: a retry of this call with the same key writes it once).
       */
      write: (id: string, message: z.input<typeof OperatorMessageBody>, o: { idempotencyKey?: string } = {}) =>
        call<OperatorMessageSent>("POST", `/v1/inbox/conversations/${q(id)}/messages`, message, {
          "idempotency-key": o.idempotencyKey ?? crypto.randomUUID(),
        }),
      release: (id: string) => call<InboxConversationItem>("POST", `/v1/inbox/conversations/${q(id)}/release`, {}),
      close: (id: string) => call<InboxConversationItem>("POST", `/v1/inbox/conversations/${q(id)}/close`, {}),
      /** Who will answer a thread nobody holds (null: nobody); a held thread is transferred instead. */
      assign: (id: string, assignee: string | null) =>
        call<InboxConversationItem>("POST", `/v1/inbox/conversations/${q(id)}/assign`, {
          assignee,
        } satisfies z.input<typeof AssignBody>),
      /** The held thread to a colleague, with no bot in between. */
      transfer: (id: string, to: string) =>
        call<InboxConversationItem>("POST", `/v1/inbox/conversations/${q(id)}/transfer`, {
          to,
        } satisfies z.input<typeof TransferBody>),
      /** The tenant's operators (the people of API_TOKENS) and the asking token's person. */
      operators: () => call<InboxOperators>("GET", "/v1/inbox/operators"),
      /** Internal notes: operators only, never shown to the patient or the model. */
      notes: (id: string) => call<z.output<typeof NoteList>>("GET", `/v1/inbox/conversations/${q(id)}/notes`),
      addNote: (id: string, note: z.input<typeof NoteBody>) =>
        call<InboxNote>("POST", `/v1/inbox/conversations/${q(id)}/notes`, note),
      /** A presence heartbeat (viewing / typing / left); repeat every few seconds while it holds. */
      presence: (id: string, p: z.input<typeof PresenceBody>) =>
        call<ThreadPresence>("POST", `/v1/inbox/conversations/${q(id)}/presence`, p),
      reminders: () => call<InboxReminders>("GET", "/v1/inbox/reminders"),
      quickReplies: {
        list: () => call<z.output<typeof QuickReplyList>>("GET", "/v1/inbox/quick-replies"),
        create: (r: QuickReplyInput) => call<QuickReply>("POST", "/v1/inbox/quick-replies", r),
        update: (id: string, r: QuickReplyInput) => call<QuickReply>("PUT", `/v1/inbox/quick-replies/${q(id)}`, r),
        remove: (id: string) => call<null>("DELETE", `/v1/inbox/quick-replies/${q(id)}`),
      },
    },
    workbench: {
      create: () =>
        call<z.output<typeof Created.conversation>>("POST", "/v1/workbench/conversations").then(
          keep((b) => b.conversationId),
        ),
      list: (query = "") => call<InboxPage>("GET", `/v1/workbench/conversations${query}`),
      get: (conversationId: string) =>
        call<WorkbenchConversation>(
          "GET",
          `/v1/workbench/conversations/${q(conversationId)}`,
          undefined,
          {},
          conversationId,
        ),
      /** An interaction of `conversationId` (its credential is sent; an operator's token needs none). */
      interaction: (interactionId: string, conversationId?: string) =>
        call<WorkbenchInteraction>(
          "GET",
          `/v1/workbench/interactions/${q(interactionId)}`,
          undefined,
          {},
          conversationId,
        ),
      send: (conversationId: string, message: WorkbenchMessage, opts: SendOptions = {}) =>
        new Turn<WorkbenchEvent>(
          t,
          `/v1/workbench/conversations/${q(conversationId)}/messages`,
          message,
          withConversation(conversationId, opts),
        ),
      /** The answer to a clarification: a candidate (by id) or free text, as one more idempotent send. */
      answer: (
        conversationId: string,
        clarification: { id: string; interactionId: string },
        answer: Pick<WorkbenchMessage, "text" | "selectedCandidateId" | "workspace" | "debug">,
        opts: SendOptions = {},
      ) =>
        new Turn<WorkbenchEvent>(
          t,
          `/v1/workbench/conversations/${q(conversationId)}/messages`,
          {
            ...answer,
            interactionId: clarification.interactionId,
            replyToClarificationId: clarification.id,
          } satisfies WorkbenchMessage,
          withConversation(conversationId, opts),
        ),
    },
    evidence: {
      create: () =>
        call<z.output<typeof Created.conversation>>("POST", "/v1/evidence/conversations").then(
          keep((b) => b.conversationId),
        ),
      list: (query = "") => call<InboxPage>("GET", `/v1/evidence/conversations${query}`),
      get: (conversationId: string) =>
        call<EvidenceConversation>(
          "GET",
          `/v1/evidence/conversations/${q(conversationId)}`,
          undefined,
          {},
          conversationId,
        ),
      send: (conversationId: string, text: string, opts: SendOptions & { debug?: boolean } = {}) =>
        new Turn<EvidenceEvent>(
          t,
          `/v1/evidence/conversations/${q(conversationId)}/messages`,
          { text, ...(opts.debug ? { debug: true } : {}) } satisfies EvidenceMessage,
          withConversation(conversationId, opts),
        ),
    },
    runs: {
      /**
       * Follows (or replays) a run from `lastEventId`: the events after it, then the live run.
       * `opts.conversationId`: the run's conversation, whose credential a `chat` token needs.
       */
      follow: (runId: string, lastEventId = 0, opts: Omit<SendOptions, "idempotencyKey"> = {}) => {
        const turn = new Turn(t, "", null, opts);
        turn.runId = runId;
        turn.lastEventId = lastEventId;
        return turn;
      },
      stages: (runId: string, conversationId?: string) =>
        call<RunStagesBody>("GET", `/v1/runs/${q(runId)}/stages`, undefined, {}, conversationId),
    },
  };
}

export type Client = ReturnType<typeof createClient>;
