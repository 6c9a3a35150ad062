import { apiError, ConnectionError } from "./errors";
import type { ClinicFinal, EvidenceFinal, WorkbenchFinal } from "./events";
import { Turn, type SendOptions, type Transport } from "./turn";

export * from "./errors";
export type * from "./events";
export { Turn, type SendOptions } from "./turn";
export { readEvents, type RawEvent } from "./sse";

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
}

export interface StoredMessage {
  role: "user" | "assistant" | "system" | "tool";
  text: string;
  meta?: Record<string, unknown>;
  seq?: number;
  runId?: string;
}

export interface ClinicThread {
  threadId: string;
  state: ClinicFinal["state"];
  messages: StoredMessage[];
}

export interface WorkbenchConversation {
  conversationId: string;
  messages: StoredMessage[];
  interactions: { id: string; status: string; planVersion: number; createdAt: string }[];
}

export interface EvidenceConversation {
  conversationId: string;
  state: unknown;
  last: { runId: string; outcome: string; reasonCodes: string[] } | null;
  messages: StoredMessage[];
}

export interface WorkbenchMessage {
  text: string;
  workspace?: unknown;
  interactionId?: string;
  replyToClarificationId?: string;
  selectedCandidateId?: string;
  basePlanVersion?: number;
  debug?: boolean;
}

/**
 * The typed client of the HTTP API (doc/clients.md). Every `send` is idempotent (a key per
 * send), resumes after a dropped connection and yields each event of the run once, in order.
 */
export function createClient(o: ClientOptions) {
  const baseUrl = o.baseUrl.replace(/\/+$/, "");
  const t: Transport = {
    baseUrl,
    fetch: o.fetch ?? ((...a) => fetch(...a)),
    headers: (extra = {}) => ({ ...extra, ...(o.token ? { authorization: `Bearer ${o.token}` } : {}) }),
    maxRetries: o.maxRetries ?? 5,
    retryDelayMs: o.retryDelayMs ?? 200,
  };

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await t.fetch(`${baseUrl}${path}`, {
        method,
        headers: t.headers(body !== undefined ? { "content-type": "application/json" } : {}),
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

  return {
    baseUrl,
    call,
    /** Any POST that starts a run (a route this client has no method for), idempotent and resuming like the others. */
    sendTo: <F = unknown>(path: string, body: unknown, opts: SendOptions = {}) => new Turn<F>(t, path, body, opts),
    clinic: {
      create: () => call<{ threadId: string }>("POST", "/v1/clinic/threads"),
      /** The tenant's threads (the list endpoint; see the API page for its paging). */
      list: <T = unknown>(query = "") => call<T>("GET", `/v1/clinic/threads${query}`),
      get: (threadId: string) => call<ClinicThread>("GET", `/v1/clinic/threads/${q(threadId)}`),
      send: (threadId: string, text: string, opts: SendOptions & { debug?: boolean } = {}) =>
        new Turn<ClinicFinal>(
          t,
          `/v1/clinic/threads/${q(threadId)}/messages`,
          { text, ...(opts.debug ? { debug: true } : {}) },
          opts,
        ),
    },
    workbench: {
      create: () => call<{ conversationId: string }>("POST", "/v1/workbench/conversations"),
      list: <T = unknown>(query = "") => call<T>("GET", `/v1/workbench/conversations${query}`),
      get: (conversationId: string) =>
        call<WorkbenchConversation>("GET", `/v1/workbench/conversations/${q(conversationId)}`),
      interaction: (interactionId: string) =>
        call<Record<string, unknown>>("GET", `/v1/workbench/interactions/${q(interactionId)}`),
      send: (conversationId: string, message: WorkbenchMessage, opts: SendOptions = {}) =>
        new Turn<WorkbenchFinal>(t, `/v1/workbench/conversations/${q(conversationId)}/messages`, message, opts),
      /** The answer to a clarification: a candidate (by id) or free text, as one more idempotent send. */
      answer: (
        conversationId: string,
        clarification: { id: string; interactionId: string },
        answer: { text: string; selectedCandidateId?: string; workspace?: unknown; debug?: boolean },
        opts: SendOptions = {},
      ) =>
        new Turn<WorkbenchFinal>(
          t,
          `/v1/workbench/conversations/${q(conversationId)}/messages`,
          { ...answer, interactionId: clarification.interactionId, replyToClarificationId: clarification.id },
          opts,
        ),
    },
    evidence: {
      create: () => call<{ conversationId: string }>("POST", "/v1/evidence/conversations"),
      list: <T = unknown>(query = "") => call<T>("GET", `/v1/evidence/conversations${query}`),
      get: (conversationId: string) =>
        call<EvidenceConversation>("GET", `/v1/evidence/conversations/${q(conversationId)}`),
      send: (conversationId: string, text: string, opts: SendOptions & { debug?: boolean } = {}) =>
        new Turn<EvidenceFinal>(
          t,
          `/v1/evidence/conversations/${q(conversationId)}/messages`,
          { text, ...(opts.debug ? { debug: true } : {}) },
          opts,
        ),
    },
    runs: {
      /** Follows (or replays) a run from `lastEventId`: the events after it, then the live run. */
      follow: (runId: string, lastEventId = 0, opts: Omit<SendOptions, "idempotencyKey"> = {}) => {
        const turn = new Turn(t, "", null, opts);
        turn.runId = runId;
        turn.lastEventId = lastEventId;
        return turn;
      },
      stages: (runId: string) => call<{ runId: string; stages: unknown[] }>("GET", `/v1/runs/${q(runId)}/stages`),
    },
  };
}

export type Client = ReturnType<typeof createClient>;
