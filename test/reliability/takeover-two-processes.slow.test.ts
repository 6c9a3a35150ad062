import { beforeAll, describe, expect, it } from "vitest";
import { onServer } from "../utils/db";
import { clinicApi, stepTail } from "../utils/clinic-api";
import { useServerProcesses, type ServerProcess } from "./processes";

/**
 * Issue 32 across two server processes on one PostgreSQL database: the patient follows the
 * thread's event stream on process A while the operator takes, writes and releases through
 * process B; A delivers each event (woken by LISTEN/NOTIFY), and the bot on A goes on with the
 * booking where the machine left it.
 */
let a: ServerProcess;
let b: ServerProcess;

describe.runIf(onServer)("human takeover across two processes on one PostgreSQL", () => {
  const fx = useServerProcesses({}, 2);
  const llm = fx.llm;
  beforeAll(async () => {
    [a, b] = fx.servers as [ServerProcess, ServerProcess];
  }, 180_000);

  it("the patient on A sees what the operator on B does, live; release on B, the booking goes on on A", async () => {
    const patient = clinicApi(a.url, "");
    const operator = clinicApi(b.url, "");
    const id = await patient.newThread();
    llm.script("router", "new_booking");
    llm.script("branch", `Как к вам обращаться?${stepTail("intro", { specialist: "ЛОР" })}`);
    await patient.say(id, "Хочу к ЛОРу");
    llm.script("router", "new_booking");
    llm.script("branch", `Что беспокоит?${stepTail("qualify", { name: "Анна" })}`);
    await patient.say(id, "Анна");
    llm.script("router", "escalate_human");
    llm.script("branch", "[INTENT_CHANGE: escalate_human|explicit_request]", "Передаю администратору.");
    expect(patient.final(await patient.say(id, "Позовите человека")).events).toContain("escalated");

    const tabA = await patient.follow(id);
    const tabA2 = await patient.follow(id);
    expect((await operator.take(id, "Мария")).status).toBe(200);
    await tabA.next((e) => e.event === "conversation.taken");
    const latencies: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const t0 = Date.now();
      const w = await operator.write(id, `Сообщение оператора ${i}`, `two-proc-${i}`);
      expect(w.status).toBe(201);
      await tabA.next((e) => e.event === "operator.message" && (e.data as { text: string }).text.endsWith(` ${i}`));
      latencies.push(Date.now() - t0);
    }
    await tabA2.next((e) => e.event === "operator.message" && (e.data as { text: string }).text.endsWith(" 5"));
    console.log(`operator message on B → patient's stream on A: ${latencies.join(", ")} ms`);
    // Within a second, woken by NOTIFY (the fallback poll alone is 500 ms).
    expect(Math.max(...latencies)).toBeLessThan(1_000);

    // A patient message on A while held: B's operator stream gets it.
    const opTab = await operator.follow(id);
    const held = patient.final(await patient.say(id, "Спасибо, жду"));
    expect(held.events).toEqual(["held_by_operator"]);
    await opTab.next((e) => e.event === "patient.message");

    expect((await operator.release(id)).status).toBe(200);
    await tabA.next((e) => e.event === "conversation.released");
    llm.script("router", "new_booking");
    llm.script("branch", `Что беспокоит?${stepTail("qualify")}`);
    const back = patient.final(await patient.say(id, "Продолжим"));
    expect(back.state).toMatchObject({ activeBranch: "new_booking", step: "qualify" });
    // A reconnect to B from the start replays the whole log in order.
    const replay = await operator.follow(id, 0);
    const all = await replay.next((e) => e.event === "conversation.released");
    expect(Number(all.id)).toBe(replay.events.length);
    for (const t of [tabA, tabA2, opTab, replay]) t.close();
  }, 120_000);
});
