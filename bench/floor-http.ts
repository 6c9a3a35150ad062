import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Sql } from "../storage/db";
import { floorState } from "./floor";
import { listenLoopback } from "./loopback";

/**
 * FLOOR-HTTP: the least work one clinic turn needs over HTTP + SSE, hand-written on node:http +
 * fetch + postgres.js (the idea of ../shared/bench/peer's variant of the same name, in the
 * bench's own process so it shares the load client, the loopback model server and the pool
 * with the engine it is compared with):
 *   parse the JSON body; ONE read (thread state + its last 12 messages); the router call
 *   (non-streaming, fetch); the branch call (streaming, fetch) relayed as SSE `token` events with
 *   a `STATE_JSON` tail cut; ONE transaction (the 2 messages + the state upsert with a version
 *   check, pipelined); `final`, `done`.
 * No run rows, no stored events, no event log, no machine: what the engine adds on top is its cost.
 */
export const FLOOR_PREFIX = "/floor/threads";

/** Prompts of the size the engine sends for a clinic turn (a few KB of system text), so request bytes are alike. */
const ROUTER_SYSTEM =
  `Ты — маршрутизатор сообщений пациента клиники. Ответь одним кодом намерения: ${["general_info", "new_booking", "reschedule", "cancel", "complaint", "red_flag"].join(", ")}.\n`.repeat(
    6,
  );
const BRANCH_SYSTEM =
  "Ты — администратор клиники. Отвечай вежливо и кратко, по-русски. В конце ответа добавь строку STATE_JSON: {...} с шагом и слотами.\n".repeat(
    14,
  );

export async function createFloorHttpTables(sql: Sql): Promise<void> {
  await sql`create table if not exists floor_threads (
    id text primary key, state jsonb not null, version integer not null, updated_at timestamptz not null default now())`;
  await sql`create table if not exists floor_thread_messages (
    thread_id text not null, seq integer not null, role text not null, text text not null,
    created_at timestamptz not null default now(), primary key (thread_id, seq))`;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  const s = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(s) });
  res.end(s);
};

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

type History = { role: "user" | "assistant"; text: string }[];
const toChat = (h: History) => h.map((m) => ({ role: m.role, content: m.text }));
const headers = { "content-type": "application/json", authorization: "Bearer bench" };

async function router(base: string, history: History, text: string): Promise<string> {
  const r = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      model: "bench-router",
      messages: [
        { role: "system", content: ROUTER_SYSTEM },
        ...toChat(history.slice(-6)),
        { role: "user", content: text },
      ],
    }),
  });
  if (!r.ok) throw new Error(`router HTTP ${r.status}`);
  const j = (await r.json()) as { choices: { message: { content: string } }[] };
  return String(j.choices[0]!.message.content).trim();
}

/** The branch call, streamed: `onDelta` gets each content delta; returns the whole text. */
async function branch(base: string, history: History, text: string, onDelta: (d: string) => void): Promise<string> {
  const r = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      model: "bench-branch",
      stream: true,
      messages: [
        { role: "system", content: BRANCH_SYSTEM },
        ...toChat(history.slice(-12)),
        { role: "user", content: text },
      ],
    }),
  });
  if (!r.ok || !r.body) throw new Error(`branch HTTP ${r.status}`);
  const dec = new TextDecoder();
  let buf = "";
  let all = "";
  for await (const bytes of r.body as unknown as AsyncIterable<Uint8Array>) {
    buf += dec.decode(bytes, { stream: true });
    let i: number;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (!block.startsWith("data: ") || block === "data: [DONE]") continue;
      const d = (JSON.parse(block.slice(6)) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta
        ?.content;
      if (d) {
        all += d;
        onDelta(d);
      }
    }
  }
  return all;
}

async function turn(sql: Sql, base: string, req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
  const body = JSON.parse(await readBody(req)) as { text?: unknown };
  const text = typeof body.text === "string" ? body.text.trim() : "";
  if (!text) return json(res, 400, { error: { code: "invalid_request", message: "text is required" } });
  const rows = await sql<{ state: { turns?: number }; version: number; history: History }[]>`
    select t.state, t.version,
           coalesce((select json_agg(json_build_object('role', h.role, 'text', h.text) order by h.seq)
                     from (select role, text, seq from floor_thread_messages where thread_id = t.id order by seq desc limit 12) h), '[]') as history
    from floor_threads t where t.id = ${id}`;
  const row = rows[0];
  if (!row) return json(res, 404, { error: { code: "not_found", message: "no such thread" } });
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let eid = 0;
  const send = (event: string, data: unknown) =>
    res.write(`event: ${event}\nid: ${++eid}\ndata: ${JSON.stringify(data)}\n\n`);
  try {
    const intent = await router(base, row.history, text);
    send("router_decision", { intent });
    // The tail cut: nothing from STATE_JSON on reaches the client.
    let visible = "";
    let cut = false;
    const raw = await branch(base, row.history, text, (d) => {
      if (cut) return;
      const at = d.indexOf("STATE_JSON");
      if (at >= 0) cut = true;
      const v = at >= 0 ? d.slice(0, at) : d;
      if (v) ((visible += v), send("token", { delta: v }));
    });
    if (!raw) throw new Error("empty branch reply");
    const state = floorState(row.version + 1);
    const seq = 2 * row.version;
    await sql.begin(async (tx) => {
      const [, up] = await Promise.all([
        tx`insert into floor_thread_messages (thread_id, seq, role, text) values (${id}, ${seq}, 'user', ${text}), (${id}, ${seq + 1}, 'assistant', ${visible})`,
        tx`update floor_threads set state = ${tx.json(state as never)}, version = version + 1, updated_at = now() where id = ${id} and version = ${row.version} returning version`,
      ]);
      if (up.length !== 1) throw new Error("the thread changed during the turn");
    });
    send("final", { reply: visible, state });
  } catch (e) {
    send("error", { code: "internal", message: (e as Error).message });
  }
  send("done", {});
  res.end();
}

const MSG = /^\/floor\/threads\/([^/]+)\/messages$/;

/** Starts FLOOR-HTTP on a loopback port; `modelBaseURL` is the scripted model server (…/v1). */
export async function startFloorHttp(sql: Sql, modelBaseURL: string): Promise<{ url: string; close(): Promise<void> }> {
  await createFloorHttpTables(sql);
  const base = modelBaseURL.replace(/\/$/, "");
  const server: Server = createServer((req, res) => {
    const fail = (e: unknown) =>
      res.headersSent ? res.end() : json(res, 500, { error: { code: "internal", message: String(e) } });
    const m = req.method === "POST" ? MSG.exec(req.url ?? "") : null;
    if (m) return void turn(sql, base, req, res, decodeURIComponent(m[1]!)).catch(fail);
    if (req.method === "POST" && req.url === FLOOR_PREFIX) {
      const id = randomUUID();
      return void sql`insert into floor_threads (id, state, version) values (${id}, ${sql.json(floorState(0) as never)}, 0)`.then(
        () => json(res, 201, { threadId: id }),
        fail,
      );
    }
    json(res, 404, { error: { code: "not_found", message: "no route" } });
  });
  server.keepAliveTimeout = 120_000;
  return listenLoopback(server);
}
