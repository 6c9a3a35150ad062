import { Agent, request } from "node:http";

/**
 * A lean HTTP + SSE client for the load generator: node:http with keep-alive and a small
 * incremental event parser, so the client costs the same little for the engine and for
 * the bare relay it is compared with.
 */
export interface SseEventLite {
  event: string;
  id: string;
  data: string;
}

export interface TurnOutcome {
  status: number;
  events: number;
  /** The last event before `done`: `final` for a committed turn, `error` otherwise. */
  closing: string | null;
  errorCode?: string;
  body?: string;
}

export class HttpClient {
  readonly agent: Agent;
  private readonly host: string;
  private readonly port: number;

  constructor(base: string) {
    const u = new URL(base);
    this.host = u.hostname;
    this.port = Number(u.port);
    this.agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 2048 });
  }

  /** POSTs JSON and reads the SSE answer to its end; `onEvent` sees every event as it arrives. */
  sse(path: string, body: unknown, onEvent?: (e: SseEventLite) => void): Promise<TurnOutcome> {
    const payload = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.host,
          port: this.port,
          path,
          method: "POST",
          agent: this.agent,
          headers: {
            "content-type": "application/json",
            accept: "text/event-stream",
            "content-length": Buffer.byteLength(payload),
          },
        },
        (res) => {
          res.setEncoding("utf8");
          const out: TurnOutcome = { status: res.statusCode ?? 0, events: 0, closing: null };
          if (!String(res.headers["content-type"]).includes("text/event-stream")) {
            let text = "";
            res.on("data", (c: string) => (text += c));
            res.on("end", () => resolve({ ...out, body: text }));
            return;
          }
          let buf = "";
          let last = "";
          res.on("data", (c: string) => {
            buf += c;
            let i: number;
            while ((i = buf.indexOf("\n\n")) >= 0) {
              const block = buf.slice(0, i);
              buf = buf.slice(i + 2);
              const e = parseBlock(block);
              if (!e) continue;
              out.events++;
              if (e.event === "done") out.closing = last;
              else last = e.event;
              if (e.event === "error") out.errorCode = (JSON.parse(e.data) as { code?: string }).code;
              onEvent?.(e);
            }
          });
          res.on("end", () => resolve(out));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  }

  json<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const payload = body === undefined ? "" : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.host,
          port: this.port,
          path,
          method,
          agent: this.agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: (text ? JSON.parse(text) : null) as T }));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

function parseBlock(block: string): SseEventLite | null {
  let event = "message";
  let id = "";
  let data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const c = line.indexOf(":");
    if (c < 0) continue;
    const field = line.slice(0, c);
    const value = line.slice(c + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "id") id = value;
    else if (field === "data") data = data ? `${data}\n${value}` : value;
  }
  return data || event !== "message" ? { event, id, data } : null;
}
