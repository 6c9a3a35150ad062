import type { ScriptedLlm } from "./scripted-llm";
import { eventsNamed, followSse, postSse, type SseResponse } from "./sse";

/**
 * The clinic's and the inbox's HTTP calls as tests make them (one place instead of a copy per
 * test file): a thread, a patient's message, an operator's take / message / release, a thread's
 * event stream.
 */
export interface ClinicState {
  activeBranch: string | null;
  step: string | null;
  slots: Record<string, unknown>;
  escalationReason: string | null;
  suspended: unknown;
}
export interface ClinicFinal {
  reply: string;
  events: string[];
  state: ClinicState;
}

/**
 * Each thread's credential from its creation, sent back on the thread's routes (a `chat` token
 * needs it): shared by every clinicApi of the test process, as a patient's device keeps it across
 * tabs (thread ids are unique, so one map serves every server).
 */
const credentials = new Map<string, string>();

/**
 * `at`: the server's URL, or a handle whose `url` is read at each call (a `useTestServer` made
 * before its hooks ran); no `token`: a server without API_TOKENS.
 */
export function clinicApi(at: string | { readonly url: string }, token?: string) {
  const base = () => (typeof at === "string" ? at : at.url);
  const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const headers = { ...auth, "content-type": "application/json" };
  const credentialFor = (path: string): Record<string, string> => {
    const id = /^\/v1\/clinic\/threads\/([^/?]+)/.exec(path)?.[1];
    const credential = id ? credentials.get(id) : undefined;
    return credential ? { "x-conversation-token": credential } : {};
  };
  const api = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${base()}${path}`, { ...init, headers: { ...headers, ...credentialFor(path), ...init.headers } });
  const json = async <T = Record<string, unknown>>(r: Response | Promise<Response>) => (await (await r).json()) as T;
  const post = (path: string, body: unknown = {}, extra: Record<string, string> = {}) =>
    api(path, { method: "POST", body: JSON.stringify(body), headers: extra });
  const newThread = async (): Promise<string> => {
    const r = await post("/v1/clinic/threads");
    if (r.status !== 201) throw new Error(`POST /v1/clinic/threads: HTTP ${r.status} ${await r.text()}`);
    const { threadId, conversationToken } = await json<{ threadId: string; conversationToken: string }>(r);
    credentials.set(threadId, conversationToken);
    return threadId;
  };
  const say = (id: string, text: string): Promise<SseResponse> =>
    postSse(
      `${base()}/v1/clinic/threads/${id}/messages`,
      { text },
      { ...headers, ...credentialFor(`/v1/clinic/threads/${id}`) },
    );
  const final = (r: SseResponse) => eventsNamed(r, "final")[0] as unknown as ClinicFinal;
  return {
    api,
    json,
    post,
    newThread,
    say,
    final,
    /**
     * A new thread whose patient asks for a person: the model is scripted as the router choosing
     * the escalation and as its branch answering `reply`; the turn must end escalated.
     */
    async escalated(
      llm: ScriptedLlm,
      text = "Позовите администратора",
      reply = "Передаю администратору.",
    ): Promise<string> {
      const id = await newThread();
      llm.script("router", "escalate_human");
      llm.script("branch", reply);
      const f = final(await say(id, text));
      if (!f?.events.includes("escalated")) throw new Error(`thread ${id} not escalated: ${JSON.stringify(f)}`);
      return id;
    },
    /** The credential `newThread` received for the thread. */
    credential: (id: string) => credentials.get(id),
    /** Sends this credential on the thread's routes (a patient's client given a thread another client created). */
    remember: (id: string, credential: string) => void credentials.set(id, credential),
    take: (id: string, operator?: string) => post(`/v1/inbox/conversations/${id}/take`, operator ? { operator } : {}),
    write: (id: string, text: string, key?: string, operator?: string) =>
      post(
        `/v1/inbox/conversations/${id}/messages`,
        operator ? { text, operator } : { text },
        key ? { "idempotency-key": key } : {},
      ),
    release: (id: string) => post(`/v1/inbox/conversations/${id}/release`),
    close: (id: string) => post(`/v1/inbox/conversations/${id}/close`),
    follow: (id: string, lastEventId?: number) =>
      followSse(`${base()}/v1/clinic/threads/${id}/events`, {
        ...auth,
        ...credentialFor(`/v1/clinic/threads/${id}`),
        ...(lastEventId !== undefined ? { "last-event-id": String(lastEventId) } : {}),
      }),
    state: async (id: string) => (await json<{ state: ClinicState }>(api(`/v1/clinic/threads/${id}`))).state,
  };
}

/** A branch reply's service tail: the step after, the slots it filled, and whether the reply was a soft insertion. */
export const stepTail = (state_after: string, slots: object = {}, soft = false) =>
  `\nSTATE_JSON: ${JSON.stringify({ state_after, slots_updated: slots, ...(soft ? { soft_insertion: true } : {}) })}`;
