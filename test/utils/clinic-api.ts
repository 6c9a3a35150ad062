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

export function clinicApi(url: string, token: string) {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const credentialFor = (path: string): Record<string, string> => {
    const id = /^\/v1\/clinic\/threads\/([^/?]+)/.exec(path)?.[1];
    const credential = id ? credentials.get(id) : undefined;
    return credential ? { "x-conversation-token": credential } : {};
  };
  const api = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${url}${path}`, { ...init, headers: { ...headers, ...credentialFor(path), ...init.headers } });
  const json = async <T = Record<string, unknown>>(r: Response | Promise<Response>) => (await (await r).json()) as T;
  const post = (path: string, body: unknown = {}, extra: Record<string, string> = {}) =>
    api(path, { method: "POST", body: JSON.stringify(body), headers: extra });
  return {
    api,
    json,
    post,
    async newThread(): Promise<string> {
      const { threadId, conversationToken } = await json<{ threadId: string; conversationToken: string }>(
        post("/v1/clinic/threads"),
      );
      credentials.set(threadId, conversationToken);
      return threadId;
    },
    /** The credential `newThread` received for the thread. */
    credential: (id: string) => credentials.get(id),
    /** Sends this credential on the thread's routes (a patient's client given a thread another client created). */
    remember: (id: string, credential: string) => void credentials.set(id, credential),
    say: (id: string, text: string): Promise<SseResponse> =>
      postSse(
        `${url}/v1/clinic/threads/${id}/messages`,
        { text },
        { ...headers, ...credentialFor(`/v1/clinic/threads/${id}`) },
      ),
    final: (r: SseResponse) => eventsNamed(r, "final")[0] as unknown as ClinicFinal,
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
      followSse(`${url}/v1/clinic/threads/${id}/events`, {
        authorization: headers.authorization,
        ...credentialFor(`/v1/clinic/threads/${id}`),
        ...(lastEventId !== undefined ? { "last-event-id": String(lastEventId) } : {}),
      }),
    state: async (id: string) => (await json<{ state: ClinicState }>(api(`/v1/clinic/threads/${id}`))).state,
  };
}

/** A branch reply's service tail: the step after and the slots it filled. */
export const stepTail = (state_after: string, slots: object = {}) =>
  `\nSTATE_JSON: ${JSON.stringify({ state_after, slots_updated: slots })}`;
