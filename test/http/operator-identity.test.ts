import { describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { clinicApi } from "../utils/clinic-api";

/**
 * Operators are people (issue 43 item 3): the author of a take or a message is the person
 * API_TOKENS binds to the token; a body's name counts only from an integration token; names are
 * validated like texts.
 */

const TOKENS = [
  "operator@a:tok-maria:Мария Иванова",
  "operator@a:tok-oleg:Олег",
  "operator@a:tok-nobody",
  "admin@a:tok-bridge:*",
  "chat@a:tok-chat",
].join(",");

const server = useTestServer({ llm: true, tokens: TOKENS, env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;

const as = (token: string) => clinicApi(server.url, token);
const errorOf = async (r: Response) =>
  ((await r.json()) as { error: { code: string; details?: { reason?: string } } }).error;

const escalatedThread = () => as("tok-chat").escalated(llm);

describe("the author is the token's person", () => {
  it("a take and a message by a person's token are authored by that person when the body names nobody", async () => {
    const id = await escalatedThread();
    const maria = as("tok-maria");
    const take = await maria.take(id);
    expect(take.status).toBe(200);
    expect(((await take.json()) as { takenBy: string }).takenBy).toBe("Мария Иванова");
    const msg = await maria.write(id, "Здравствуйте, я на связи.");
    expect(msg.status).toBe(201);
    expect(((await msg.json()) as { operator: string }).operator).toBe("Мария Иванова");
    // Another person writes into the held thread as herself, not as the holder.
    const oleg = await as("tok-oleg").write(id, "Добрый день, подключился Олег.");
    expect(((await oleg.json()) as { operator: string }).operator).toBe("Олег");
    // The same person taking again is a repeat; another person is refused with the documented reason.
    expect((await maria.take(id)).status).toBe(200);
    const other = await as("tok-oleg").take(id);
    expect(other.status).toBe(409);
    expect((await errorOf(other)).details?.reason).toBe("taken_by_another");
  });

  it("a person's token cannot act under another name; a token bound to nobody cannot name one", async () => {
    const id = await escalatedThread();
    const forged = await as("tok-maria").take(id, "Главврач");
    expect(forged.status).toBe(403);
    expect((await errorOf(forged)).details?.reason).toBe("operator_name_not_allowed");
    const named = await as("tok-nobody").take(id, "Кто-то");
    expect(named.status).toBe(403);
    // Naming oneself is fine.
    expect((await as("tok-maria").take(id, "Мария Иванова")).status).toBe(200);
  });

  it("an integration token names the operator in the body; a name of invisible characters is refused like an empty text", async () => {
    const id = await escalatedThread();
    const bridge = as("tok-bridge");
    for (const blank of ["\u200b\u200b", "\u2060\ufeff", "   ", "\u200d \u00ad"]) {
      const r = await bridge.take(id, blank);
      expect(r.status).toBe(400);
      expect((await errorOf(r)).code).toBe("invalid_request");
    }
    const take = await bridge.take(id, "Анна (Chatwoot)");
    expect(((await take.json()) as { takenBy: string }).takenBy).toBe("Анна (Chatwoot)");
    const blankAuthor = await bridge.write(id, "Текст", undefined, "\u200b");
    expect(blankAuthor.status).toBe(400);
  });

  it("a token bound to nobody acts anonymously: the message is the holder's", async () => {
    const id = await escalatedThread();
    await as("tok-oleg").take(id);
    const r = await as("tok-nobody").write(id, "Ответ без имени");
    expect(r.status).toBe(201);
    expect(((await r.json()) as { operator: string }).operator).toBe("Олег");
  });
});
