import { createServer, type Server, type ServerResponse } from "node:http";
import { createParser } from "eventsource-parser";
import { completion, completionChunk, readBody } from "../../test/utils/openai-wire";
import {
  isInjected,
  renderStep,
  ROLES,
  type CandidateView,
  type DocView,
  type Role,
  type Script,
  type Step,
} from "./steps";

/**
 * The model every eval run talks to: an OpenAI-compatible server on loopback. Scripted, it answers
 * each role from the current turn's script (an unscripted call gets an empty reply, `{}` where a
 * JSON schema was asked). Live, it forwards every call to the real endpoint with the role's model
 * name and records what came back, so the run can be replayed as a scripted one. Either way it
 * measures each call: role, prompt size, tokens, latency.
 */

export interface Upstream {
  baseURL: string;
  apiKey?: string;
  /** The real model name per role (LLM_MODEL_<ROLE>, else LLM_MODEL). */
  models: Record<Role, string>;
}

export interface CallRecord {
  role: Role;
  /** What the model answered: its content, or a fault. */
  reply: Step;
  source: "script" | "default" | "upstream";
  promptChars: number;
  promptTokens: number;
  completionTokens: number;
  /** A live run served this call from the script (a fault or a deliberate mistake), not from the model. */
  injected: boolean;
  /** True when tokens are estimated (chars / 4) rather than reported by the endpoint. */
  estimated: boolean;
  latencyMs: number;
  note?: string;
}

export interface TurnContext {
  documents?: DocView[];
  /** Used when a role has no scripted reply: the answer role's stand-in (scripted runs only). */
  fallback?: Partial<Record<Role, (messages: { role: string; content: string }[]) => string>>;
}

export interface ModelServer {
  baseURL: string;
  live: boolean;
  beginTurn(script: Script, ctx?: TurnContext): void;
  /** The calls made since beginTurn. */
  endTurn(): CallRecord[];
  close(): Promise<void>;
}

const roleOf = (model: string): Role | null => {
  const r = model.replace(/^eval-/, "");
  return (ROLES as readonly string[]).includes(r) ? (r as Role) : null;
};

const estimate = (chars: number) => Math.ceil(chars / 4);

function candidatesOf(messages: { content: string }[]): CandidateView[] {
  try {
    const parsed = JSON.parse(messages.at(-1)?.content ?? "{}") as { candidates?: CandidateView[] };
    return Array.isArray(parsed.candidates) ? parsed.candidates : [];
  } catch {
    return [];
  }
}

export async function startModelServer(o: { upstream?: Upstream } = {}): Promise<ModelServer> {
  let queues = new Map<Role, Step[]>();
  let ctx: TurnContext = {};
  let calls: CallRecord[] = [];
  let usageRejected = false;

  async function serveScripted(
    res: ServerResponse,
    body: Record<string, unknown>,
    role: Role,
    step: Step | undefined,
    started: number,
    promptChars: number,
    messages: { role: string; content: string }[],
  ) {
    const s = step === undefined ? undefined : typeof step === "string" ? { content: step } : step;
    if (s?.delayMs) await new Promise((r) => setTimeout(r, s.delayMs));
    const record = (reply: Step, content: string, note?: string) =>
      calls.push({
        role,
        reply,
        source: step === undefined ? "default" : "script",
        injected: !!o.upstream,
        promptChars,
        promptTokens: estimate(promptChars),
        completionTokens: estimate(content.length),
        estimated: true,
        latencyMs: performance.now() - started,
        ...(note ? { note } : {}),
      });
    if (s?.hangUp) {
      record({ hangUp: true }, "");
      return res.socket?.destroy();
    }
    if (s?.status) {
      record({ status: s.status }, "");
      res.writeHead(s.status, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: `scripted ${s.status}`, type: "server_error" } }));
    }
    let content: string;
    let note: string | undefined;
    if (step === undefined) content = ctx.fallback?.[role]?.(messages) ?? (body.response_format ? "{}" : "");
    else
      ({ content, note } = renderStep(step, {
        candidates: candidatesOf(messages),
        ...(ctx.documents ? { documents: ctx.documents } : {}),
      }));
    record(content, content, note);
    const model = String(body.model);
    if (body.stream) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const send = (x: object) => res.write(`data: ${JSON.stringify(x)}\n\n`);
      send(completionChunk(model, { role: "assistant", content: "" }));
      const cut = s?.cutAfter;
      for (const piece of (cut ? content.slice(0, cut) : content).match(/[\s\S]{1,16}/g) ?? [])
        send(completionChunk(model, { content: piece }));
      // A stream broken off after its first tokens: the client has shown them and must not retry.
      if (cut) {
        await new Promise((r) => setTimeout(r, 20)); // let the partial reply reach the client first
        return res.socket?.destroy();
      }
      send(completionChunk(model, {}, "stop"));
      res.write("data: [DONE]\n\n");
      return res.end();
    }
    res.writeHead(200, { "content-type": "application/json" });
    const usage = {
      prompt_tokens: estimate(promptChars),
      completion_tokens: estimate(content.length),
      total_tokens: 0,
    };
    res.end(JSON.stringify(completion(model, content, usage)));
  }

  async function forward(
    res: ServerResponse,
    body: Record<string, unknown>,
    role: Role,
    started: number,
    promptChars: number,
  ) {
    const up = o.upstream!;
    const payload: Record<string, unknown> = { ...body, model: up.models[role] };
    if (body.stream && !usageRejected) payload.stream_options = { include_usage: true };
    const send = () =>
      fetch(`${up.baseURL.replace(/\/$/, "")}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(up.apiKey ? { authorization: `Bearer ${up.apiKey}` } : {}) },
        body: JSON.stringify(payload),
      });
    let r: Response;
    try {
      r = await send();
      // Some servers refuse stream_options; ask again without it and stop asking.
      if (r.status === 400 && payload.stream_options) {
        usageRejected = true;
        delete payload.stream_options;
        r = await send();
      }
    } catch (e) {
      calls.push({
        role,
        reply: { status: 599 },
        source: "upstream",
        injected: false,
        promptChars,
        promptTokens: estimate(promptChars),
        completionTokens: 0,
        estimated: true,
        latencyMs: performance.now() - started,
        note: String(e),
      });
      res.writeHead(502, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: `upstream unreachable: ${String(e)}` } }));
    }
    const push = (
      content: string | null,
      usage: { prompt_tokens?: number; completion_tokens?: number } | undefined,
      status?: number,
    ) =>
      calls.push({
        role,
        reply: status ? { status } : (content ?? ""),
        source: "upstream",
        injected: false,
        promptChars,
        promptTokens: usage?.prompt_tokens ?? estimate(promptChars),
        completionTokens: usage?.completion_tokens ?? estimate((content ?? "").length),
        estimated: usage?.prompt_tokens === undefined,
        latencyMs: performance.now() - started,
      });
    if (!r.ok) {
      const text = await r.text();
      push(null, undefined, r.status);
      res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "application/json" });
      return res.end(text);
    }
    if (!body.stream) {
      const json = (await r.json()) as {
        choices?: { message?: { content?: string } }[];
        usage?: { prompt_tokens?: number; completion_tokens?: number };
      };
      push(json.choices?.[0]?.message?.content ?? "", json.usage);
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(json));
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let content = "";
    let usage: { prompt_tokens?: number; completion_tokens?: number } | undefined;
    const parser = createParser({
      onEvent(m) {
        if (m.data === "[DONE]") return;
        try {
          const c = JSON.parse(m.data) as { choices?: { delta?: { content?: string } }[]; usage?: typeof usage };
          content += c.choices?.[0]?.delta?.content ?? "";
          if (c.usage) usage = c.usage;
        } catch {
          /* not JSON: passed through untouched */
        }
      },
    });
    const decoder = new TextDecoder();
    for await (const piece of r.body as unknown as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(piece, { stream: true }));
      res.write(piece);
    }
    push(content, usage);
    res.end();
  }

  const server: Server = createServer(async (req, res) => {
    const started = performance.now();
    const raw = await readBody(req);
    if (!req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: "only chat/completions is served" } }));
    }
    let body: Record<string, unknown> & { messages?: { role: string; content: string }[] };
    try {
      body = JSON.parse(raw);
    } catch {
      res.writeHead(400);
      return res.end("{}");
    }
    const role = roleOf(String(body.model ?? ""));
    if (!role) {
      res.writeHead(400, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: `unknown model ${String(body.model)}` } }));
    }
    const messages = body.messages ?? [];
    const promptChars = JSON.stringify(messages).length;
    const step = queues.get(role)?.shift();
    try {
      if (o.upstream && (step === undefined || !isInjected(step)))
        return await forward(res, body, role, started, promptChars);
      return await serveScripted(res, body, role, step, started, promptChars, messages);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(e) } }));
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    live: !!o.upstream,
    beginTurn(script, c = {}) {
      queues = new Map(Object.entries(script).map(([r, steps]) => [r as Role, [...(steps ?? [])]]));
      ctx = c;
      calls = [];
    },
    endTurn() {
      const out = calls;
      calls = [];
      return out;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
