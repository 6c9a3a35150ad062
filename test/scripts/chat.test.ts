import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { workspace } from "../systems/workbench/fixtures";
import { freePort } from "../reliability/processes";
import { candidateLine } from "../../scripts/chat";

/** `npm run chat` as a user runs it: a real process, lines on stdin, the streamed conversation on stdout. */

const server = useTestServer({ llm: true, tokens: "secret-token" });
const llm = server.llm;

function chat(
  args: string[],
  lines: string[],
  url = server.url,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done, fail) => {
    const p = spawn(resolve("node_modules/.bin/tsx"), ["scripts/chat.ts", ...args, "--url", url], {
      env: { ...process.env, API_TOKEN: "secret-token" },
    });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("error", fail);
    p.on("close", (code) => done({ code, out, err }));
    p.stdin.end(lines.map((l) => `${l}\n`).join(""));
  });
}

describe("npm run chat", () => {
  it("clinic: streams the reply without the service tail, prints the router decision and the thread state", async () => {
    llm.script("router", "new_booking", "price_question");
    llm.script(
      "branch",
      'Здравствуйте! Как к вам обращаться?\nSTATE_JSON: {"state_after": "intro", "slots_updated": {"specialist": "ЛОР"}}',
      'Приём стоит 2500 ₽. Как к вам обращаться?\nSTATE_JSON: {"state_after": "intro", "slots_updated": {}, "soft_insertion": true}',
    );
    const r = await chat(["clinic"], ["Хочу к ЛОРу", "а сколько стоит?", "/state", "/quit", "не дойдёт"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/\[тред [0-9a-f-]{36}\]/);
    expect(r.out).toContain("[маршрутизатор: new_booking]");
    expect(r.out).toContain("< Здравствуйте! Как к вам обращаться?");
    expect(r.out).toContain("[ветка new_booking · шаг intro · переключений 0 из 3]");
    expect(r.out).toContain(
      "[ветка new_booking · шаг intro · переключений 0 из 3 · удержались в ветке, боковой вопрос]",
    );
    expect(r.out).toContain('"specialist": "ЛОР"');
    expect(r.out).not.toContain("STATE_JSON");
    expect(r.out).not.toContain("не дойдёт\n<");
  });

  it("workbench: a numbered candidate answers the clarification", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "chat-")), "ws.json");
    writeFileSync(file, JSON.stringify(workspace));
    llm.reset();
    llm.script("reranker", '{"choice": "clarify"}');
    llm.script("answer", "Это архивная [[composition-discount-v1]].");
    const s = session(["workbench", "--workspace", file]);
    s.send("Покажи композицию «Расчёт скидки»");
    const asked = await s.waitFor(/номер — выбрать/);
    expect(asked).toContain("? Какую композицию вы имеете в виду?");
    const pick = /^\s+(\d)\) Расчёт скидки · Composition · (?:папка «[^»]+»|в корне) · composition-discount-v1$/m.exec(
      asked,
    )![1]!;
    s.send(pick);
    const answered = await s.waitFor(/\[completed/);
    expect(answered).toContain("< Это архивная [[composition-discount-v1]].");
    expect(answered).toContain("[completed · проверка ok · ссылки: composition-discount-v1]");
    s.send("/quit");
    expect(await s.exit).toBe(0);
    expect(llm.calls.map((c) => c.role)).toEqual(["reranker", "answer"]);
  });

  it("workbench: a rejected answer is marked void and the replacement printed; the rejected sentence never", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "chat-")), "ws.json");
    writeFileSync(file, JSON.stringify(workspace));
    llm.reset();
    llm.script(
      "answer",
      "Композиция [[composition-alpha]] лежит в папке «Продажи».\nГотово: я изменил формулу скидки в ней. Проверьте.",
    );
    const r = await chat(["workbench", "--workspace", file], ["Покажи composition-alpha", "/quit"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("< Композиция [[composition-alpha]] лежит в папке «Продажи».");
    expect(r.out).not.toContain("я изменил");
    const marker = r.out.indexOf("[× ответ модели отклонён проверкой (claimed_change)");
    expect(marker).toBeGreaterThan(r.out.indexOf("< Композиция"));
    // The replacement follows the marker, then the closing line reports the failed check.
    expect(r.out.slice(marker)).toMatch(
      /ответ:\]\n< Ответ модели не прошёл автоматическую проверку[\s\S]*\[\[composition-alpha\]\][\s\S]*\[completed · проверка не пройдена · ссылки: composition-alpha/,
    );
  });
});

describe("npm run chat: failures a user can act on", () => {
  it("a down server: one clear line, no stack", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const r = await chat(["clinic"], ["Привет", "/quit"], url);
    expect(r.out).toContain(`! Сервер недоступен (${url}): соединение отклонено — сервер не запущен?`);
    expect(r.out + r.err).not.toMatch(/\bat .+:\d+:\d+/);
    expect(r.code).toBe(0);
  });

  it("a bad --workspace file: a message naming the file and the reason, exit code 2, no stack", async () => {
    const dir = mkdtempSync(join(tmpdir(), "chat-"));
    writeFileSync(join(dir, "bad.json"), "{ not json");
    const broken = await chat(["workbench", "--workspace", join(dir, "bad.json")], ["/quit"]);
    expect(broken.code).toBe(2);
    expect(broken.err).toContain(`! Не удалось прочитать --workspace ${join(dir, "bad.json")}: не JSON`);
    const missing = await chat(["workbench", "--workspace", join(dir, "nope.json")], ["/quit"]);
    expect(missing.err).toContain("файла нет");
    expect(broken.err + missing.err).not.toMatch(/\bat .+:\d+:\d+/);
  });

  it("Ctrl-C (to the whole process group) mid-answer stops printing; /last shows the answer the server stored", async () => {
    llm.reset();
    llm.script("router", "general_info");
    const reply = "Клиника работает ежедневно с восьми утра до восьми вечера, без перерыва на обед. ".repeat(4).trim();
    llm.script("branch", { content: reply, chunkDelayMs: 60 });
    const s = session(["clinic"]);
    s.send("Когда вы работаете?");
    await s.waitFor(/< Клиника/);
    s.interrupt();
    await s.waitFor(/прервано: ответ дописывается на сервере/);
    s.send("/last");
    const shown = await s.waitFor(`/last`, 30_000, `< ${reply}\n`);
    // Printing stopped at Ctrl-C: the full answer appears once, after /last.
    expect(shown.indexOf(`< ${reply}\n`)).toBeGreaterThan(shown.indexOf("прервано"));
    s.send("/quit");
    expect(await s.exit).toBe(0);
  }, 60_000);
});

/**
 * `npm run chat` in its own process group, and Ctrl-C as a terminal sends it: SIGINT to the whole
 * group (npm and node included). The script execs node, so only the chat handles it.
 */
function session(args: string[]) {
  const p = spawn("npm", ["run", "--silent", "chat", "--", ...args, "--url", server.url], {
    env: { ...process.env, API_TOKEN: "secret-token" },
    detached: true,
  });
  let out = "";
  p.stdout.on("data", (d) => (out += d));
  return {
    send: (line: string) => p.stdin.write(`${line}\n`),
    /** Until `re` matches (or, given `text`, until `text` appears after the first match of the string `re`). */
    waitFor: async (re: RegExp | string, ms = 15_000, text?: string) => {
      const until = Date.now() + ms;
      const seen = () =>
        typeof re === "string"
          ? out.includes(re) && (!text || out.slice(out.indexOf(re)).includes(text))
          : re.test(out);
      while (!seen()) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${re}; got:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return out;
    },
    interrupt: () => process.kill(-p.pid!, "SIGINT"),
    exit: new Promise<number | null>((r) => p.on("close", r)),
  };
}

describe("clarification candidates", () => {
  it("show what tells them apart: the folder (or the root) besides name, type and identity", () => {
    const a = candidateLine({ displayName: "Отгрузка", documentType: "form", identity: "f1", folderName: "Склад" });
    const b = candidateLine({ displayName: "Отгрузка", documentType: "form", identity: "f2", folderName: "Архив" });
    const root = candidateLine({ displayName: "Отгрузка", documentType: "form", identity: "f3", folderIdentity: null });
    expect(a).toContain("Склад");
    expect(b).toContain("Архив");
    expect(root).toContain("в корне");
    expect(new Set([a, b, root]).size).toBe(3);
  });
});
