import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { createParser } from "eventsource-parser";

/**
 * `npm run chat -- [clinic|workbench]`: a terminal client that talks to a running server through
 * the same SSE API the pages use, printing the reply as it streams. Lines starting with `/` are
 * commands (/new, /state, /quit); in the Workbench a number picks a clarification candidate.
 */

const HELP = `Usage: npm run chat -- [clinic|workbench] [options]
  --url <base>         server (default $CHAT_URL or http://127.0.0.1:3000)
  --token <token>      bearer token (default $API_TOKEN)
  --workspace <file>   Workbench: a workspace snapshot JSON sent with every message
  --debug              print the run's stages
Commands: /new — new conversation, /state — thread state (clinic), /quit`;

type Json = Record<string, any>;
const out = (s: string) => process.stdout.write(s);

export interface ChatOptions {
  mode: "clinic" | "workbench";
  url: string;
  token?: string;
  workspace?: unknown;
  debug: boolean;
}

const EVENT_RU: Record<string, string> = {
  sticky: "удержались в ветке",
  soft_insertion: "боковой вопрос",
  handoff: "переключение ветки",
  resumed: "возврат к отложенному сценарию",
  transition_rejected: "переход отклонён",
  loop_guard: "защита от петли",
  escalated: "передача оператору",
  model_unavailable: "модель недоступна",
};

export function createChat(o: ChatOptions) {
  const headers = (json: boolean): Record<string, string> => ({ ...(json ? { "content-type": "application/json" } : {}), ...(o.token ? { authorization: `Bearer ${o.token}` } : {}) });
  let id: string | null = null;
  let open: Json | null = null;

  async function call(method: string, path: string, body?: unknown): Promise<Json> {
    const res = await fetch(`${o.url}${path}`, { method, headers: headers(body !== undefined), body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await res.json().catch(() => ({}))) as Json;
    if (!res.ok) throw new Error(`${json.error?.message ?? res.statusText} (${json.error?.code ?? res.status})`);
    return json;
  }

  async function ensure(): Promise<string> {
    if (id) return id;
    const r = o.mode === "clinic" ? await call("POST", "/v1/clinic/threads") : await call("POST", "/v1/workbench/conversations");
    id = (r.threadId ?? r.conversationId) as string;
    out(`[${o.mode === "clinic" ? "тред" : "диалог"} ${id}]\n`);
    return id;
  }

  async function stream(path: string, body: unknown, onEvent: (event: string, data: Json) => void): Promise<void> {
    const res = await fetch(`${o.url}${path}`, { method: "POST", headers: { ...headers(true), accept: "text/event-stream" }, body: JSON.stringify(body) });
    if (!res.headers.get("content-type")?.includes("text/event-stream")) {
      const json = (await res.json().catch(() => ({}))) as Json;
      throw new Error(`${json.error?.message ?? res.statusText} (${json.error?.code ?? res.status})`);
    }
    const parser = createParser({ onEvent: (m) => onEvent(m.event ?? "message", m.data ? (JSON.parse(m.data) as Json) : {}) });
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  }

  async function say(text: string): Promise<void> {
    const conv = await ensure();
    let streamed = false;
    // A stage arriving after the reply began starts on its own line.
    const stageLine = (d: Json) => o.debug && out(`${streamed ? "\n" : ""}  · ${d.stageId} ${d.name} ${d.status} ${d.durationMs} мс\n`);
    // doc/streaming.md: the printed tokens are void; a terminal cannot erase them, so say so
    // plainly and print the answer that replaces them.
    const replaced = (d: Json) => {
      // Only the issue codes: an issue's detail may quote the rejected text itself.
      const issues = [...new Set(((d.issues as string[] | undefined) ?? []).map((i) => i.split(":")[0]!))];
      out(`${streamed ? "\n" : ""}  [× ответ модели отклонён проверкой${issues.length ? ` (${issues.join(", ")})` : ""}; текст выше недействителен — ответ:]\n< ${d.text}`);
      streamed = true;
    };
    if (o.mode === "clinic") {
      await stream(`/v1/clinic/threads/${conv}/messages`, { text, debug: o.debug }, (event, d) => {
        if (event === "router_decision") out(`  [маршрутизатор: ${d.intent}]\n`);
        else if (event === "stage") stageLine(d);
        else if (event === "token") {
          if (!streamed) out("< ");
          streamed = true;
          out(d.delta);
        } else if (event === "answer_replaced") replaced(d);
        else if (event === "final") {
          if (!streamed) out(`< ${d.reply}`);
          const s = d.state as Json;
          const events = (d.events as string[]).map((e) => (e.startsWith("guard_blocked:") ? `защитное условие ${e.slice(14)}` : (EVENT_RU[e] ?? e)));
          out(`\n  [ветка ${s.activeBranch ?? "—"}${s.step ? ` · шаг ${s.step}` : ""} · переключений ${s.handoffCount} из 3${s.escalationReason ? ` · причина ${s.escalationReason}` : ""}${events.length ? ` · ${events.join(", ")}` : ""}]\n`);
        } else if (event === "error") out(`\n! ${d.message} (${d.code})\n`);
      });
      return;
    }
    const n = Number(text.trim());
    const pick = open && Number.isInteger(n) && n >= 1 && n <= open.candidates.length ? open.candidates[n - 1] : null;
    const body = {
      text: pick ? pick.displayName : text,
      debug: o.debug,
      ...(o.workspace ? { workspace: o.workspace } : {}),
      ...(open ? { interactionId: open.interactionId, replyToClarificationId: open.id } : {}),
      ...(pick ? { selectedCandidateId: pick.candidateId } : {}),
    };
    await stream(`/v1/workbench/conversations/${conv}/messages`, body, (event, d) => {
      if (event === "stage") stageLine(d);
      else if (event === "token") {
        if (!streamed) out("< ");
        streamed = true;
        out(d.delta);
      } else if (event === "answer_replaced") replaced(d);
      else if (event === "clarification_required") {
        open = d;
        out(`? ${d.question}\n`);
        (d.candidates as Json[]).forEach((c, i) => out(`  ${i + 1}) ${c.displayName} · ${c.documentType} · ${c.identity}\n`));
        out("  (номер — выбрать, или ответьте текстом)\n");
      } else if (event === "final") {
        open = null;
        if (!streamed) out(`< ${d.answer}`);
        out(`\n  [${d.status} · проверка ${d.validation?.ok ? "ok" : "не пройдена"} · ссылки: ${(d.entityCitations ?? []).join(", ") || "—"}]\n`);
      } else if (event === "error") {
        open = null;
        out(`\n! ${d.message} (${d.code})\n`);
      }
    });
  }

  async function command(line: string): Promise<boolean> {
    const cmd = line.trim();
    if (cmd === "/quit" || cmd === "/exit") return false;
    if (cmd === "/new") {
      id = null;
      open = null;
      await ensure();
    } else if (cmd === "/state") {
      if (o.mode !== "clinic" || !id) out("  (состояние есть у треда клиники после первого сообщения)\n");
      else out(`${JSON.stringify((await call("GET", `/v1/clinic/threads/${id}`)).state, null, 2)}\n`);
    } else if (cmd.startsWith("/")) out(`${HELP}\n`);
    else if (cmd) await say(cmd);
    return true;
  }

  return { command, say, get id() { return id; } };
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { url: { type: "string" }, token: { type: "string" }, workspace: { type: "string" }, debug: { type: "boolean", default: false }, help: { type: "boolean", default: false } },
  });
  const mode = (positionals[0] ?? "clinic") as ChatOptions["mode"];
  if (values.help || (mode !== "clinic" && mode !== "workbench")) {
    out(`${HELP}\n`);
    return;
  }
  const chat = createChat({
    mode,
    url: (values.url ?? process.env.CHAT_URL ?? "http://127.0.0.1:3000").replace(/\/$/, ""),
    token: values.token ?? process.env.API_TOKEN,
    workspace: values.workspace ? JSON.parse(readFileSync(values.workspace, "utf8")) : undefined,
    debug: values.debug ?? false,
  });
  const tty = process.stdin.isTTY;
  if (tty) out(`${mode === "clinic" ? "Чат пациента клиники" : "Workbench (Configurator chat)"} — /quit для выхода\n> `);
  const rl = createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    if (!tty && line.trim()) out(`> ${line}\n`);
    try {
      if (!(await chat.command(line))) break;
    } catch (e) {
      out(`! ${(e as Error).message}\n`);
    }
    if (tty) out("> ");
  }
  rl.close();
}

if (process.argv[1]?.endsWith("chat.ts")) await main();
