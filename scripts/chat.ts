import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import {
  ApiError,
  ClientError,
  ConnectionError,
  createClient,
  type AnswerReplaced,
  type ClarificationRequired,
  type StageEvent,
  type Turn,
  type UntypedEvent,
} from "../client";

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
Commands: /new — new conversation, /state — thread state (clinic), /last — the last answer the server stored, /quit
Ctrl-C during an answer stops printing it (the server still finishes and stores it: /last shows it); Ctrl-C again quits.`;

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

/** One line for a user: what went wrong and what to do, never a stack. */
export function describeError(e: unknown): string {
  if (e instanceof ConnectionError)
    return `${e.message}. Проверьте --url и что сервер запущен (npm start). / Server unreachable.`;
  if (e instanceof ApiError) return `${e.message} (${e.reason ?? e.code})`;
  if (e instanceof ClientError) return e.message;
  return (e as Error)?.message ?? String(e);
}

/**
 * One candidate as a line: name, type, the folder it sits in and its identity — candidates that
 * share a name and type (two «Отгрузка» documents in different folders) still read differently.
 */
export function candidateLine(c: {
  displayName: string;
  documentType: string;
  identity: string;
  folderName?: string;
  folderIdentity?: string | null;
}): string {
  const folder = c.folderName || c.folderIdentity;
  return [c.displayName, c.documentType, folder ? `папка «${folder}»` : "в корне", c.identity].join(" · ");
}

export function createChat(o: ChatOptions) {
  const client = createClient({ baseUrl: o.url, token: o.token });
  let id: string | null = null;
  /** The Workbench's open clarification: a number typed next picks one of its candidates. */
  let open: ClarificationRequired | null = null;
  /** A turn whose printing Ctrl-C stopped: it is still read to the end, so the server stores it. */
  let background: Promise<unknown> | null = null;
  let current: { stop(): void } | null = null;

  async function ensure(): Promise<string> {
    if (id) return id;
    const r =
      o.mode === "clinic" ? (await client.clinic.create()).threadId : (await client.workbench.create()).conversationId;
    id = r;
    out(`[${o.mode === "clinic" ? "тред" : "диалог"} ${id}]\n`);
    return id;
  }

  /** Prints a turn's events until it ends or Ctrl-C stops the printing (the turn is then read on, silently). */
  async function stream<E extends UntypedEvent>(turn: Turn<E>, onEvent: (e: E) => void): Promise<void> {
    const it = turn[Symbol.asyncIterator]();
    let stopped = false;
    let wake: () => void = () => {};
    const stop = new Promise<void>((r) => (wake = r));
    current = {
      stop() {
        stopped = true;
        wake();
      },
    };
    try {
      for (;;) {
        const next = await Promise.race([it.next(), stop.then(() => null)]);
        if (next === null || stopped) {
          out("\n  [прервано: ответ дописывается на сервере; /last — показать сохранённый ответ]\n");
          background = (async () => {
            while (!(await it.next()).done);
          })().catch(() => {});
          return;
        }
        if (next.done) return;
        onEvent(next.value);
      }
    } finally {
      current = null;
    }
  }

  async function say(text: string): Promise<void> {
    const conv = await ensure();
    let streamed = false;
    // A stage arriving after the reply began starts on its own line.
    const stageLine = (d: StageEvent) =>
      o.debug && out(`${streamed ? "\n" : ""}  · ${d.stageId} ${d.name} ${d.status} ${d.durationMs} мс\n`);
    const token = (delta: string) => {
      if (!streamed) out("< ");
      streamed = true;
      out(delta);
    };
    // doc/streaming.md: the printed tokens are void; a terminal cannot erase them, so say so
    // plainly and print the answer that replaces them.
    const replaced = (d: AnswerReplaced) => {
      // Only the issue codes: an issue's detail may quote the rejected text itself.
      const issues = [...new Set(d.issues.map((i) => i.split(":")[0]!))];
      out(
        `${streamed ? "\n" : ""}  [× ответ модели отклонён проверкой${issues.length ? ` (${issues.join(", ")})` : ""}; текст выше недействителен — ответ:]\n< ${d.text}`,
      );
      streamed = true;
    };
    if (o.mode === "clinic") {
      await stream(client.clinic.send(conv, text, { debug: o.debug }), (e) => {
        if (e.event === "router_decision") out(`  [маршрутизатор: ${e.data.intent}]\n`);
        else if (e.event === "stage") stageLine(e.data);
        else if (e.event === "token") token(e.data.delta);
        else if (e.event === "final") {
          const d = e.data;
          if (!streamed) out(`< ${d.reply}`);
          const s = d.state;
          const events = d.events.map((e) =>
            e.startsWith("guard_blocked:") ? `защитное условие ${e.slice(14)}` : (EVENT_RU[e] ?? e),
          );
          out(
            `\n  [ветка ${s.activeBranch ?? "—"}${s.step ? ` · шаг ${s.step}` : ""} · переключений ${s.handoffCount} из 3${s.escalationReason ? ` · причина ${s.escalationReason}` : ""}${events.length ? ` · ${events.join(", ")}` : ""}]\n`,
          );
        } else if (e.event === "error") out(`\n! ${e.data.message} (${e.data.code})\n`);
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
    await stream(client.workbench.send(conv, body), (e) => {
      if (e.event === "stage") stageLine(e.data);
      else if (e.event === "token") token(e.data.delta);
      else if (e.event === "answer_replaced") replaced(e.data);
      else if (e.event === "clarification_required") {
        open = e.data;
        out(`? ${e.data.question}\n`);
        e.data.candidates.forEach((c, i) => out(`  ${i + 1}) ${candidateLine(c)}\n`));
        out("  (номер — выбрать, или ответьте текстом)\n");
      } else if (e.event === "final") {
        const d = e.data;
        open = null;
        if (!streamed) out(`< ${d.answer}`);
        out(
          `\n  [${d.status} · проверка ${d.validation.ok ? "ok" : "не пройдена"} · ссылки: ${d.entityCitations.join(", ") || "—"}]\n`,
        );
      } else if (e.event === "error") {
        open = null;
        out(`\n! ${e.data.message} (${e.data.code})\n`);
      }
    });
  }

  /** The last assistant message the server stored (after a Ctrl-C, once the interrupted turn is over). */
  async function last(): Promise<void> {
    if (!id) return void out("  (диалога ещё нет)\n");
    if (background) {
      out("  [жду окончания прерванного ответа…]\n");
      await background;
      background = null;
    }
    const messages =
      o.mode === "clinic" ? (await client.clinic.get(id)).messages : (await client.workbench.get(id)).messages;
    const answer = [...messages].reverse().find((m) => m.role === "assistant");
    out(answer ? `< ${answer.text}\n` : "  (сохранённого ответа нет: ход не записан — отправьте сообщение ещё раз)\n");
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
      else out(`${JSON.stringify((await client.clinic.get(id)).state, null, 2)}\n`);
    } else if (cmd === "/last") await last();
    else if (cmd.startsWith("/")) out(`${HELP}\n`);
    else if (cmd) await say(cmd);
    return true;
  }

  /** Ctrl-C: stops printing the answer in progress; false when nothing was in progress (the caller quits). */
  function interrupt(): boolean {
    if (!current) return false;
    current.stop();
    return true;
  }

  return {
    command,
    say,
    interrupt,
    get id() {
      return id;
    },
  };
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      token: { type: "string" },
      workspace: { type: "string" },
      debug: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  const mode = (positionals[0] ?? "clinic") as ChatOptions["mode"];
  if (values.help || (mode !== "clinic" && mode !== "workbench")) {
    out(`${HELP}\n`);
    return;
  }
  let workspace: unknown;
  if (values.workspace) {
    try {
      workspace = JSON.parse(readFileSync(values.workspace, "utf8"));
    } catch (e) {
      const why =
        (e as NodeJS.ErrnoException).code === "ENOENT"
          ? "файла нет"
          : (e as NodeJS.ErrnoException).code === "EISDIR"
            ? "это папка"
            : e instanceof SyntaxError
              ? `не JSON (${e.message})`
              : (e as Error).message;
      process.stderr.write(
        `! Не удалось прочитать --workspace ${values.workspace}: ${why}. / Cannot read the workspace file.\n`,
      );
      process.exitCode = 2;
      return;
    }
  }
  const chat = createChat({
    mode,
    url: (values.url ?? process.env.CHAT_URL ?? "http://127.0.0.1:3000").replace(/\/$/, ""),
    token: values.token ?? process.env.API_TOKEN,
    workspace,
    debug: values.debug ?? false,
  });
  // One Ctrl-C can arrive twice: the terminal signals the whole group, and npm forwards its copy
  // to its child (`npm run chat` execs node, so no tsx wrapper adds a third). Copies within
  // 300 ms are one key press: the first stops the answer being printed; a later one with no
  // answer running quits.
  let lastSigint = 0;
  process.on("SIGINT", () => {
    const now = Date.now();
    const duplicate = now - lastSigint < 300;
    lastSigint = now;
    if (duplicate) return;
    if (!chat.interrupt()) process.exit(130);
  });
  const tty = process.stdin.isTTY;
  if (tty)
    out(`${mode === "clinic" ? "Чат пациента клиники" : "Workbench (Configurator chat)"} — /quit для выхода\n> `);
  const rl = createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    if (!tty && line.trim()) out(`> ${line}\n`);
    try {
      if (!(await chat.command(line))) break;
    } catch (e) {
      out(`! ${describeError(e)}\n`);
    }
    if (tty) out("> ");
  }
  rl.close();
}

if (process.argv[1]?.endsWith("chat.ts")) await main();
