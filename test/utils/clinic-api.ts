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

export function clinicApi(url: string, token: string) {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const api = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${url}${path}`, { ...init, headers: { ...headers, ...init.headers } });
  const json = async <T = Record<string, unknown>>(r: Response | Promise<Response>) => (await (await r).json()) as T;
  const post = (path: string, body: unknown = {}, extra: Record<string, string> = {}) =>
    api(path, { method: "POST", body: JSON.stringify(body), headers: extra });
  return {
    api,
    json,
    post,
    async newThread(): Promise<string> {
      return (await json<{ threadId: string }>(post("/v1/clinic/threads"))).threadId;
    },
    say: (id: string, text: string): Promise<SseResponse> =>
      postSse(`${url}/v1/clinic/threads/${id}/messages`, { text }, headers),
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
        ...(lastEventId !== undefined ? { "last-event-id": String(lastEventId) } : {}),
      }),
    state: async (id: string) => (await json<{ state: ClinicState }>(api(`/v1/clinic/threads/${id}`))).state,
  };
}

/** A branch reply's service tail: the step after and the slots it filled. */
export const stepTail = (state_after: string, slots: object = {}) =>
  `\nSTATE_JSON: ${JSON.stringify({ state_after, slots_updated: slots })}`;
