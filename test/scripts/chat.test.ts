import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../utils/db";
import { startScriptedLlm, type ScriptedLlm } from "../utils/scripted-llm";
import { startTestServer } from "../utils/server";
import { workspace } from "../systems/workbench/fixtures";

/** `npm run chat` as a user runs it: a real process, lines on stdin, the streamed conversation on stdout. */

const t = useTestDatabase();
let llm: ScriptedLlm;
let server: Awaited<ReturnType<typeof startTestServer>>;

beforeAll(async () => {
  llm = await startScriptedLlm();
  server = await startTestServer({ db: t.db, llm, tokens: "secret-token" });
});
afterAll(async () => {
  await server?.stop();
  await llm?.close();
});

function chat(args: string[], lines: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done, fail) => {
    const p = spawn(resolve("node_modules/.bin/tsx"), ["scripts/chat.ts", ...args, "--url", server.url], { env: { ...process.env, API_TOKEN: "secret-token" } });
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
    llm.script("branch", 'Здравствуйте! Как к вам обращаться?\nSTATE_JSON: {"state_after": "intro", "slots_updated": {"specialist": "ЛОР"}}', 'Приём стоит 2500 ₽. Как к вам обращаться?\nSTATE_JSON: {"state_after": "intro", "slots_updated": {}, "soft_insertion": true}');
    const r = await chat(["clinic"], ["Хочу к ЛОРу", "а сколько стоит?", "/state", "/quit", "не дойдёт"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/\[тред [0-9a-f-]{36}\]/);
    expect(r.out).toContain("[маршрутизатор: new_booking]");
    expect(r.out).toContain("< Здравствуйте! Как к вам обращаться?");
    expect(r.out).toContain("[ветка new_booking · шаг intro · переключений 0 из 3]");
    expect(r.out).toContain("[ветка new_booking · шаг intro · переключений 0 из 3 · удержались в ветке, боковой вопрос]");
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
    const pick = /^\s+(\d)\) Расчёт скидки · Composition · composition-discount-v1$/m.exec(asked)![1]!;
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
    llm.script("answer", "Композиция [[composition-alpha]] лежит в папке «Продажи».\nГотово: я изменил формулу скидки в ней. Проверьте.");
    const r = await chat(["workbench", "--workspace", file], ["Покажи composition-alpha", "/quit"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("< Композиция [[composition-alpha]] лежит в папке «Продажи».");
    expect(r.out).not.toContain("я изменил");
    const marker = r.out.indexOf("[× ответ модели отклонён проверкой (claimed_change)");
    expect(marker).toBeGreaterThan(r.out.indexOf("< Композиция"));
    // The replacement follows the marker, then the closing line reports the failed check.
    expect(r.out.slice(marker)).toMatch(/ответ:\]\n< Ответ модели не прошёл автоматическую проверку[\s\S]*\[\[composition-alpha\]\][\s\S]*\[completed · проверка не пройдена · ссылки: composition-alpha/);
  });
});

function session(args: string[]) {
  const p = spawn(resolve("node_modules/.bin/tsx"), ["scripts/chat.ts", ...args, "--url", server.url], { env: { ...process.env, API_TOKEN: "secret-token" } });
  let out = "";
  p.stdout.on("data", (d) => (out += d));
  return {
    send: (line: string) => p.stdin.write(`${line}\n`),
    waitFor: async (re: RegExp, ms = 15_000) => {
      const until = Date.now() + ms;
      while (!re.test(out)) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${re}; got:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return out;
    },
    exit: new Promise<number | null>((r) => p.on("close", r)),
  };
}
