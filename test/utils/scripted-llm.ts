import { createServer, type Server } from "node:http";
import { modelRoles, type DialogueSystem } from "../../driver/system";
import { dialogueSystems } from "../../systems";
import { completion, completionChunk, readBody } from "./openai-wire";

/**
 * A scripted OpenAI-compatible server on loopback, used through the real `openai` client.
 * Replies are queued per role; the role is read from the request's `model` (`test-<role>`
 * or the role name itself). An unscripted call answers empty (`{}` when a schema was asked).
 */
export type ScriptStep =
  | string
  | {
      content?: string;
      status?: number;
      delayMs?: number;
      chunkDelayMs?: number;
      /** Close the connection after this many characters of a streamed reply. */
      truncateAfter?: number;
      /** Drop the TCP connection without answering. */
      hangUp?: boolean;
      /** Stop sending after this many characters of a streamed reply (of a whole reply: of its JSON body), keeping the connection open. */
      stallAfter?: number;
      /** Send this raw text as one SSE `data:` line after the first piece (e.g. broken JSON). */
      rawChunk?: string;
      /** With `status`: extra response headers (e.g. `retry-after` on a 429). */
      headers?: Record<string, string>;
      /** With `status`: put the request's Authorization header in the error message, as some providers do. */
      echoAuth?: boolean;
      /** Characters per streamed chunk (default 8). */
      chunkChars?: number;
      /** Stream `content` again and again, never finishing, until the client leaves (a whole reply: a JSON body that never ends). */
      endless?: boolean;
      /** The reply written after reading the request (e.g. choosing from a menu the prompt carries); replaces `content`. */
      reply?: (call: RecordedCall) => string;
    };

export interface RecordedCall {
  role: string;
  model: string;
  stream: boolean;
  body: Record<string, unknown>;
  messages: { role: string; content: string }[];
  /** When the request arrived (Date.now()): the gap between two calls is the client's retry pause. */
  at: number;
}

export interface ScriptedLlm {
  baseURL: string;
  calls: RecordedCall[];
  script(role: string, ...steps: ScriptStep[]): void;
  reset(): void;
  count(role?: string): number;
  close(): Promise<void>;
}

const roleOf = (model: string) => model.replace(/^(test|eval)-/, "");

export async function startScriptedLlm(): Promise<ScriptedLlm> {
  const queues = new Map<string, ScriptStep[]>();
  const calls: RecordedCall[] = [];
  const server: Server = createServer(async (req, res) => {
    const raw = await readBody(req);
    if (!req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: "only chat/completions is scripted" } }));
    }
    const body = JSON.parse(raw) as Record<string, unknown> & {
      model: string;
      stream?: boolean;
      messages: RecordedCall["messages"];
      response_format?: unknown;
    };
    const role = roleOf(body.model);
    const call: RecordedCall = {
      role,
      model: body.model,
      stream: !!body.stream,
      body,
      messages: body.messages,
      at: Date.now(),
    };
    calls.push(call);
    const step: ScriptStep = queues.get(role)?.shift() ?? { content: body.response_format ? "{}" : "" };
    const s = typeof step === "string" ? { content: step } : step.reply ? { ...step, content: step.reply(call) } : step;
    if (s.delayMs) await new Promise((r) => setTimeout(r, s.delayMs));
    if (s.hangUp) return req.socket.destroy();
    if (s.status) {
      res.writeHead(s.status, { "content-type": "application/json", ...s.headers });
      const echoed = s.echoAuth ? `: incorrect credentials ${req.headers.authorization ?? ""}` : "";
      return res.end(JSON.stringify({ error: { message: `scripted ${s.status}${echoed}`, type: "server_error" } }));
    }
    const content = s.content ?? "";
    if (body.stream) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const send = (o: object) => res.write(`data: ${JSON.stringify(o)}\n\n`);
      send(completionChunk(body.model, { role: "assistant", content: "" }));
      let sent = 0;
      let gone = false;
      res.once("close", () => (gone = true));
      // Writes wait for the socket to drain, so a 10 MB reply goes at the client's pace, not into this process's memory.
      const drained = () =>
        new Promise<void>((r) => {
          const end = () => (res.off("drain", end), res.off("close", end), r());
          res.once("drain", end);
          res.once("close", end);
        });
      const size = s.chunkChars ?? 8;
      do {
        for (let at = 0; at < content.length; at += size) {
          if (gone) return;
          const piece = content.slice(at, at + size);
          if (s.truncateAfter !== undefined && sent >= s.truncateAfter) {
            await new Promise((r) => setTimeout(r, 20)); // let the partial reply reach the client first
            return req.socket.destroy();
          }
          if (s.stallAfter !== undefined && sent >= s.stallAfter) {
            // Silent but open, as a stuck upstream is: only the client can end it.
            if (!gone) await new Promise<void>((r) => req.socket.once("close", () => r()));
            return;
          }
          if (!res.write(`data: ${JSON.stringify(completionChunk(body.model, { content: piece }))}\n\n`))
            await drained();
          if (s.rawChunk !== undefined && sent === 0) res.write(`data: ${s.rawChunk}\n\n`);
          sent += piece.length;
          if (s.chunkDelayMs) await new Promise((r) => setTimeout(r, s.chunkDelayMs));
        }
        if (s.endless) await new Promise((r) => setImmediate(r)); // an endless stream still lets the server breathe
      } while (s.endless && content && !gone);
      if (gone) return;
      send(completionChunk(body.model, {}, "stop"));
      res.write("data: [DONE]\n\n");
      return res.end();
    }
    res.writeHead(200, { "content-type": "application/json" });
    const whole = JSON.stringify(completion(body.model, content));
    let gone = false;
    res.once("close", () => (gone = true));
    if (s.endless) {
      // A JSON body that never ends: its content string grows until the client leaves.
      res.write(whole.slice(0, whole.indexOf(JSON.stringify(content)) + 1));
      const piece = JSON.stringify(content || "x").slice(1, -1);
      while (!gone)
        if (!res.write(piece.repeat(64)))
          await new Promise<void>((r) => {
            const end = () => (res.off("drain", end), res.off("close", end), r());
            res.once("drain", end);
            res.once("close", end);
          });
      return;
    }
    if (s.stallAfter !== undefined) {
      // Headers and part of the body, then silence with the connection open.
      res.write(whole.slice(0, s.stallAfter));
      if (!gone) await new Promise<void>((r) => req.socket.once("close", () => r()));
      return;
    }
    res.end(whole);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    calls,
    script(role, ...steps) {
      queues.set(role, [...(queues.get(role) ?? []), ...steps]);
    },
    reset() {
      queues.clear();
      calls.length = 0;
    },
    count(role) {
      return role ? calls.filter((c) => c.role === role).length : calls.length;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * The LLM config that points every role the served systems call at the scripted server
 * (`test-<role>` models): the roles are read from the systems list, as the server reads them.
 */
export function scriptedLlmConfig(s: ScriptedLlm, systems: readonly DialogueSystem[] = dialogueSystems) {
  const roles = modelRoles(systems);
  return {
    baseURL: s.baseURL,
    apiKey: "test-key",
    model: "test-answer",
    roleModels: Object.fromEntries(roles.map((r) => [r, `test-${r}`])),
    timeoutMs: 5_000,
    retryDelayMs: 10,
  };
}

/** A scripted model that is started later: a module-level `const llm = s.llm` works before beforeAll. */
export function lazyLlm(get: () => ScriptedLlm): ScriptedLlm {
  return {
    get baseURL() {
      return get().baseURL;
    },
    get calls() {
      return get().calls;
    },
    script: (role, ...steps) => get().script(role, ...steps),
    reset: () => get().reset(),
    count: (role) => get().count(role),
    close: () => get().close(),
  };
}
