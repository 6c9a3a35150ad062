import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { parseTokens } from "../../http/config";

/**
 * API_TOKENS (issue 43 item 3, issue 47 item 4): a token may name its person; the whole list is
 * validated at start, and a bad entry stops the start with a message naming it (never its token).
 */
describe("API_TOKENS grammar", () => {
  it("role@tenant:token:person binds a person; :* marks an integration; the old forms keep their meaning", () => {
    const m = parseTokens("tok0,acme:tok1,chat@acme:tok2,operator@clinic:tok3:Мария Иванова,admin@clinic:tok4:*")!;
    expect(m.get("tok0")).toEqual({ tenant: "default", role: "admin" });
    expect(m.get("tok1")).toEqual({ tenant: "acme", role: "admin" });
    expect(m.get("tok2")).toEqual({ tenant: "acme", role: "chat" });
    expect(m.get("tok3")).toEqual({ tenant: "clinic", role: "operator", person: "Мария Иванова" });
    expect(m.get("tok4")).toEqual({ tenant: "clinic", role: "admin", integration: true });
  });

  it.each([
    ["Chat@clinic:T1,patient@clinic:T2", /entry #1 \(Chat@clinic:…\): unknown role "Chat"/],
    ["chat@clinic:T1,patient@clinic:T2", /entry #2 \(patient@clinic:…\): unknown role "patient"/],
    ["a:T1,b:T1", /entry #2 \(b:…\): the same token as entry #1/],
    ["a:", /entry #1 \(a:…\): empty token/],
    [":T1", /entry #1 \(:…\): tenant "" must be/],
    ["operator@T1", /entry #1 .*a role needs a tenant/],
    ["operator@clinic:T1:\u200b\u200b", /entry #1 .*person: пустое имя/],
    ["ok:T0,operator@cl inic:T1", /entry #2 .*whitespace/],
  ])("%s stops the start", (spec, message) => {
    expect(() => parseTokens(spec)).toThrow(message);
  });

  it("a refused entry's message never shows its token", () => {
    expect(() => parseTokens("Chat@clinic:very-secret-token")).toThrow(/^(?!.*very-secret-token)/s);
  });

  it("the server does not start on an unknown role: exit 1 with the entry named", () => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      API_TOKENS: "Chat@clinic:T1",
      DATA_DIR: "memory://",
      PORT: "0",
    };
    delete env.DATABASE_URL;
    const r = spawnSync(process.execPath, ["--import", "tsx", "main.ts"], { env, encoding: "utf8", timeout: 80_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      'could not start: Invalid configuration: API_TOKENS entry #1 (Chat@clinic:…): unknown role "Chat"',
    );
  }, 90_000);
});
