import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { clinicApi } from "../utils/clinic-api";

/**
 * One conversation, one writer at a time, nothing thrown away (issue 43 item 1), over real HTTP on
 * either database: an operator's action and a patient's turn on one thread are ordered, never
 * lost; operators writing at once are all accepted; a refusal only when the machine no longer
 * takes the event, with its documented reason.
 */

let c: ReturnType<typeof clinicApi>;

const server = useTestServer({ llm: true, tokens: "a:tok-a:*", env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;
beforeAll(async () => {
  // An integration token: the body names the operator (http/operator-identity.ts).
  c = clinicApi(server.url, "tok-a");
});

type Message = { role: string; text: string; meta: Record<string, unknown> };
const transcript = async (id: string) =>
  (await c.json<{ messages: Message[] }>(c.api(`/v1/inbox/conversations/${id}`))).messages;
const reasonOf = async (r: Response) =>
  ((await r.json()) as { error: { code: string; details?: { reason?: string } } }).error;

/** Resolves once the model has been asked `n` branch calls in all (the turn is streaming then). */
async function branchCalled(n: number) {
  for (let i = 0; i < 400 && llm.count("branch") < n; i++) await new Promise((r) => setTimeout(r, 5));
  expect(llm.count("branch")).toBeGreaterThanOrEqual(n);
}

const escalated = () => c.escalated(llm, "Соедините с администратором");

describe("a take while the model streams", () => {
  it("stores the patient's words every time, with the holding reply; the bot's text is kept for the operator (×10)", async () => {
    for (let i = 0; i < 10; i++) {
      // Every other round: an escalated thread nobody holds yet, where the patient asks again.
      const id = i % 2 === 0 ? await c.newThread() : await escalated();
      const words = `Сообщение пациента ${i}: где же вы?`;
      const draft = `Ответ бота номер ${i}, который пишется медленно и долго.`;
      llm.script("router", i % 2 === 0 ? "general_info" : "escalate_human");
      llm.script("branch", { content: draft, chunkDelayMs: 25, chunkChars: 4 });
      const before = llm.count("branch");
      const turn = c.say(id, words);
      await branchCalled(before + 1);
      const take = await c.take(id, `Мария ${i}`);
      expect(take.status).toBe(200);
      const r = await turn;
      expect(r.events.find((e) => e.event === "error")).toBeUndefined();
      const final = c.final(r);
      expect(final.events).toContain("held_by_operator");
      expect(final.reply).toContain(`Мария ${i}`);
      const msgs = await transcript(id);
      const user = msgs.filter((m) => m.role === "user").at(-1)!;
      const reply = msgs.at(-1)!;
      expect(user.text).toBe(words);
      expect(reply.role).toBe("assistant");
      expect(reply.text).toBe(final.reply);
      expect(reply.meta.botDraft).toBe(draft);
    }
  });

  it("two operators take at once: one holds it, the other gets taken_by_another", async () => {
    const id = await escalated();
    const [a, b] = await Promise.all([c.take(id, "Мария"), c.take(id, "Олег")]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 409]);
    const loser = a.status === 409 ? a : b;
    expect((await reasonOf(loser)).details?.reason).toBe("taken_by_another");
  });
});

describe("operators side by side", () => {
  it("20 operators writing at once into a held thread: all accepted on the first try, all stored", async () => {
    const id = await escalated();
    expect((await c.take(id, "Мария")).status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => c.write(id, `Ответ ${i}`, undefined, `Оператор ${i}`)),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(201));
    const bodies = (await Promise.all(answers.map((r) => r.json()))) as { messageSeq: number }[];
    expect(new Set(bodies.map((b) => b.messageSeq)).size).toBe(20);
    const texts = (await transcript(id)).filter((m) => m.role === "operator").map((m) => m.text);
    expect(texts.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `Ответ ${i}`).sort());
  });

  it("the same Idempotency-Key twice at once: one message, the second answer 200 replayed", async () => {
    const id = await escalated();
    await c.take(id, "Мария");
    const [a, b] = await Promise.all([
      c.write(id, "Одно сообщение", "k-twice"),
      c.write(id, "Одно сообщение", "k-twice"),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    const [ja, jb] = (await Promise.all([a.json(), b.json()])) as { replayed: boolean; messageSeq: number }[];
    expect([ja!.replayed, jb!.replayed].sort()).toEqual([false, true]);
    expect(ja!.messageSeq).toBe(jb!.messageSeq);
    expect((await transcript(id)).filter((m) => m.text === "Одно сообщение")).toHaveLength(1);
  });

  it("an operator's message against a release: the release wins or the message lands; a refusal says not_held", async () => {
    for (let i = 0; i < 5; i++) {
      const id = await escalated();
      await c.take(id, "Мария");
      const [m, rel] = await Promise.all([c.write(id, `Успею? ${i}`), c.release(id)]);
      expect(rel.status).toBe(200);
      const stored = (await transcript(id)).some((x) => x.role === "operator" && x.text === `Успею? ${i}`);
      if (m.status === 201) expect(stored).toBe(true);
      else {
        expect(m.status).toBe(409);
        expect((await reasonOf(m)).details?.reason).toBe("not_held");
        expect(stored).toBe(false);
      }
    }
  });

  it("a patient and an operator writing at once into a held thread: both stored, neither refused", async () => {
    for (let i = 0; i < 5; i++) {
      const id = await escalated();
      await c.take(id, "Мария");
      const [turn, op] = await Promise.all([c.say(id, `Пациент ${i}`), c.write(id, `Оператор ${i}`)]);
      expect(op.status).toBe(201);
      expect(turn.events.find((e) => e.event === "error")).toBeUndefined();
      expect(c.final(turn).events).toContain("held_by_operator");
      const msgs = await transcript(id);
      expect(msgs.some((m) => m.role === "user" && m.text === `Пациент ${i}`)).toBe(true);
      expect(msgs.some((m) => m.role === "operator" && m.text === `Оператор ${i}`)).toBe(true);
    }
  });
});
