// The answer model misbehaves the way real models do; the claim checker must keep every rejected
// claim off the wire (no `token` carries it), replace the answer before `final`, and store a
// package that agrees with itself and with what the client was told to show.
import { serve, type ServerType } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evidenceMcpHttpHandler } from "../../../systems/evidence/mcp-server/server";
import { closeEvidenceMcp, useEvidenceMcp } from "../../../systems/evidence/routes";
import { useTestDatabase } from "../../utils/db";
import { startScriptedLlm, type ScriptedLlm } from "../../utils/scripted-llm";
import { startTestServer } from "../../utils/server";
import { eventsNamed, postSse } from "../../utils/sse";

const t = useTestDatabase();
const A = { authorization: "Bearer tok-a" };
let llm: ScriptedLlm;
let app: Awaited<ReturnType<typeof startTestServer>>;
let faulty: ServerType;
let faultyUrl = "";

beforeAll(async () => {
  llm = await startScriptedLlm();
  app = await startTestServer({ db: t.db, llm, tokens: "a:tok-a" });
  await useEvidenceMcp(app.deps, { endpoint: { kind: "http", url: `${app.url}/v1/evidence/mcp`, headers: A } });
  // the same demo server, but the core settlements tool answers too late
  const slow = evidenceMcpHttpHandler(t.db.sql, { get_open_supplier_settlements: { delayMs: 2_000 } });
  faultyUrl = await new Promise<string>((resolve) => {
    faulty = serve({ fetch: slow, port: 0, hostname: "127.0.0.1" }, (i) => resolve(`http://127.0.0.1:${i.port}/mcp`));
  });
}, 120_000);
afterAll(async () => {
  await closeEvidenceMcp(app.deps).catch(() => {});
  await app?.stop();
  await llm?.close();
  await new Promise<void>(
    (r) => (faulty.close(() => r()), (faulty as { closeAllConnections?: () => void }).closeAllConnections?.()),
  );
});

type Pkg = {
  short_answer: string;
  user_facing_answer: string;
  composed_by: string;
  blocks: { direct: string; found: string[] };
  claims: { kind: string; text: string; evidence_ids: string[] }[];
};
type Final = {
  outcome: string;
  runId: string;
  conversationId: string;
  answer: string;
  package: Pkg;
  validation: { ok: boolean; issues: string[] };
};
type Fact = { fact_id: string; type: string; entity: string; value: unknown };

const DETECT = "detect_open_supplier_settlements";
function interp(o: { date?: string; reading?: string }) {
  return JSON.stringify({
    normalized_question: "Определить поставщиков с незакрытыми расчётами на дату отсечения",
    business_intent: DETECT,
    expected_answer_shape: "list_with_explanation",
    domain_candidates: ["supplier_settlements"],
    time_scope: { explicit_period: null, as_of_date: null, surface: o.date ?? null, needs_resolution: true },
    entity_candidates: [{ surface: "поставщики", type: "counterparty_group", confidence: 0.95 }],
    business_terms: [{ surface: "хвосты", reading: o.reading ?? null, explicit: !!o.reading }],
    ambiguities: [],
    success_criteria: [],
  });
}
const CRITIC = JSON.stringify({ covered_points: [], uncovered_points: [], extra_reasons: [], next_best_actions: [] });

/** The seed's question on the working date: partially answered (assumed reading and date, a conflict). */
const PARTIAL = { text: "По каким поставщикам висят хвосты?", planner: [interp({}), "{}", "{}", CRITIC] };
/** Any open balance on 15.02.2026: fully answered, one supplier (ООО «Альфа-Снаб», 120 000,00 ₽). */
const FULL = {
  text: "Любые незакрытые остатки по поставщикам на 15.02.2026",
  planner: [interp({ reading: "open_settlement_balance", date: "15.02.2026" }), "{}", "{}", CRITIC],
};
/** The settlements tool times out: blocked by tooling. */
const TIMEOUT = { text: "По каким поставщикам висят хвосты на 31.03.2026?", planner: [] as string[], faulty: true };

async function conversation(): Promise<string> {
  const r = await fetch(`${app.url}/v1/evidence/conversations`, { method: "POST", headers: A });
  return ((await r.json()) as { conversationId: string }).conversationId;
}

async function ask(q: { text: string; planner: string[]; faulty?: boolean }, answer?: string) {
  if (q.faulty) await useEvidenceMcp(app.deps, { endpoint: { kind: "http", url: faultyUrl }, timeoutMs: 300 });
  try {
    llm.reset();
    if (q.planner.length) llm.script("planner", ...q.planner);
    if (answer) llm.script("answer", { content: answer, chunkDelayMs: 1 });
    const id = await conversation();
    const r = await postSse(`${app.url}/v1/evidence/conversations/${id}/messages`, { text: q.text }, A);
    expect(eventsNamed(r, "error")).toEqual([]);
    const final = eventsNamed(r, "final")[0] as unknown as Final;
    const run = (await (await fetch(`${app.url}/v1/evidence/runs/${final.runId}`, { headers: A })).json()) as {
      artifacts: Record<string, any>;
    };
    const conv = (await (await fetch(`${app.url}/v1/evidence/conversations/${id}`, { headers: A })).json()) as {
      messages: { role: string; text: string }[];
    };
    return {
      r,
      final,
      tokens: eventsNamed(r, "token")
        .map((e) => e.delta)
        .join(""),
      artifacts: run.artifacts,
      messages: conv.messages,
    };
  } finally {
    if (q.faulty)
      await useEvidenceMcp(app.deps, { endpoint: { kind: "http", url: `${app.url}/v1/evidence/mcp`, headers: A } });
  }
}

/** The facts the evidence for a question holds (tool outputs are deterministic, so the ids repeat). */
const factCache = new Map<string, Fact[]>();
async function factsOf(q: typeof PARTIAL): Promise<Fact[]> {
  if (!factCache.has(q.text)) factCache.set(q.text, (await ask(q)).artifacts.evidence_bundle.facts);
  return factCache.get(q.text)!;
}
const idOf = (facts: Fact[], name: string) =>
  facts.find((f) => f.type === "open_balance" && f.entity.includes(name))!.fact_id;

const answer = (parts: { direct: string; checked?: string; found?: string; gaps?: string; next?: string }) =>
  [
    `**Коротко.** ${parts.direct}`,
    `**Что проверено.** ${parts.checked ?? "Регистр расчётов с поставщиками на дату отсечения."}`,
    `**Что найдено.** ${parts.found ?? "См. выше."}`,
    `**Что не удалось установить.** ${parts.gaps ?? "Что именно считать «хвостами» — принята трактовка по остаткам."}`,
    `**Что уточнить / следующий шаг.** ${parts.next ?? "Уточните, считать ли хвостами только просроченные остатки."}`,
  ].join("\n\n");

let tried = 0;
let blocked = 0;

/** A rejected answer: the claim never went out, the composed answer replaced it before `final`, and everything stored agrees. */
async function expectReplaced(q: typeof PARTIAL, text: string, claim: RegExp, issue: RegExp) {
  tried++;
  const { r, final, tokens, artifacts, messages } = await ask(q, text);
  expect(text).toMatch(claim); // the script does carry the claim
  expect(tokens).not.toMatch(claim);
  expect(text.startsWith(tokens)).toBe(true); // only a checked prefix of the model's text was released
  const names = r.events.map((e) => e.event);
  const replaced = eventsNamed(r, "answer_replaced");
  expect(replaced).toHaveLength(1);
  expect(names.indexOf("answer_replaced")).toBeLessThan(names.indexOf("final"));
  expect(names.slice(names.indexOf("answer_replaced") + 1).includes("token")).toBe(false);
  expect(replaced[0]).toMatchObject({ reason: "validation_failed", text: final.answer });
  expect((replaced[0]!.issues as string[]).join(" | ")).toMatch(issue);
  expect(final.validation.ok).toBe(false);
  expect(final.answer).not.toMatch(claim);
  // one source: the composed package, in `final`, in the run's artifacts and in the conversation
  expect(final.package.composed_by).toBe("deterministic");
  expect(final.package.user_facing_answer).toBe(final.answer);
  expect(final.answer).toContain(final.package.short_answer);
  expect(final.package.short_answer).toBe(final.package.blocks.direct);
  expect(artifacts.final_answer_package).toEqual(final.package);
  expect(messages.at(-1)).toMatchObject({ role: "assistant", text: final.answer });
  // the rejected text and its issues stay with the run, not in what is shown
  expect(artifacts.rejected_answer).toMatchObject({ text, released: tokens });
  expect(artifacts.rejected_answer.issues).toEqual(final.validation.issues);
  blocked++;
}

describe("the Evidence answer through the claim checker (scripted model, demo MCP server)", () => {
  it("a false «no debts» after the settlements tool timed out (BLOCKED_BY_TOOLING) is replaced", async () => {
    await expectReplaced(
      TIMEOUT,
      answer({ direct: "Хвостов по поставщикам нет — все расчёты закрыты." }),
      /Хвостов по поставщикам нет/,
      /не допускается: инструмент не отработал/,
    );
    await expectReplaced(
      TIMEOUT,
      answer({ direct: "Проверка завершена. Незакрытых остатков у поставщиков не обнаружено, ответ полный." }),
      /не обнаружено/,
      /не допускается/,
    );
  });

  it("a real amount and its fact id moved to another party is replaced", async () => {
    const facts = await factsOf(PARTIAL);
    const techno = idOf(facts, "ТехноПоставка");
    // to a customer the evidence does not hold
    await expectReplaced(
      PARTIAL,
      answer({ direct: `На 10.04.2026 наш долг перед ООО «Ромашка» — 150 000,00 ₽ [${techno}].` }),
      /Ромашка/,
      /ООО «Ромашка» отсутствует в данных/,
    );
    // to another supplier of the same run, after a correct first sentence (released, then replaced)
    await expectReplaced(
      PARTIAL,
      answer({
        direct: `На 10.04.2026 незакрытые остатки есть у поставщиков. Крупнейший — ООО «Альфа-Снаб»: 150 000,00 ₽ [${techno}].`,
      }),
      /Альфа-Снаб»: 150/,
      /не относится к ООО «Альфа-Снаб».*\| факт F\d+ относится к АО «ТехноПоставка»/,
    );
  });

  it("a figure moved across a sentence boundary, and to a customer the evidence does bind, is replaced", async () => {
    const facts = await factsOf(PARTIAL);
    const techno = idOf(facts, "ТехноПоставка");
    // each sentence alone is plausible; together they give ТехноПоставка's debt to Альфа-Снаб
    await expectReplaced(
      PARTIAL,
      answer({ direct: `Крупнейший должник — ООО «Альфа-Снаб». Его долг 150 000,00 ₽ [${techno}].` }),
      /Его долг 150 000/,
      /150 000 ₽ после упоминания ООО «Альфа-Снаб»/,
    );
    // ООО «Ромашка» is a customer: asked about by name, the catalog binds it with its role
    const customer = { text: "Какое сальдо по ООО «Ромашка» на 10.04.2026?", planner: [] as string[] };
    const bound = (await ask(customer)).artifacts.evidence_bundle.facts as (Fact & { details: { roles?: string[] } })[];
    expect(bound.find((f) => f.type === "entity_binding")?.details.roles).toEqual(["customer"]);
    await expectReplaced(
      customer,
      answer({ direct: "На 10.04.2026 наш долг перед ООО «Ромашка» — 40 000,00 ₽." }),
      /долг перед ООО «Ромашка»/,
      /покупатель, а не поставщик/,
    );
  });

  it("an invented counterparty owing «2050 ₽» is replaced", async () => {
    await expectReplaced(
      PARTIAL,
      answer({ direct: "На 10.04.2026 висит долг перед ООО «Бета-Сервис» — 2050 ₽." }),
      /Бета-Сервис/,
      /ООО «Бета-Сервис» отсутствует в данных.*2 050 ₽/,
    );
    await expectReplaced(
      PARTIAL,
      answer({ direct: "Кроме того, небольшой хвост перед Гаммой — 2050 руб." }),
      /Гаммой/,
      /сумма 2 050 ₽ не подтверждена/,
    );
  });

  it("«7 поставщиков … 950 тыс.» with 3 in the evidence is replaced", async () => {
    await expectReplaced(
      PARTIAL,
      answer({ direct: "На 10.04.2026 хвосты висят по 7 поставщикам на общую сумму около 950 тыс. ₽." }),
      /7 поставщикам/,
      /(?=.*«7 поставщикам»: в данных проверки 3)(?=.*950 000 ₽ не подтверждена)/,
    );
    await expectReplaced(
      PARTIAL,
      answer({
        direct: "Долг есть перед поставщиками.",
        found: "Незакрытые остатки у пяти контрагентов, в сумме 1,2 млн ₽.",
      }),
      /пяти контрагентов/,
      /«пяти контрагентов»: в данных проверки 3/,
    );
  });

  it("«ответ полный» on a PARTIALLY_ANSWERED run is replaced", async () => {
    await expectReplaced(
      PARTIAL,
      answer({ direct: "Долг есть перед тремя поставщиками, ответ полный." }),
      /ответ полный/,
      /полноте ответа не допускается: исход PARTIALLY_ANSWERED/,
    );
    await expectReplaced(
      PARTIAL,
      answer({ direct: "Долг есть перед тремя поставщиками.", gaps: "Пробелов нет: данные проверены полностью." }),
      /Пробелов нет/,
      /полноте ответа не допускается/,
    );
  });

  it("a correct model answer passes untouched, on a partial and on a full run", async () => {
    const p = await factsOf(PARTIAL);
    const good = answer({
      direct: `На 10.04.2026 незакрытые остатки есть у трёх поставщиков: АО «ТехноПоставка» — 150 000,00 ₽ [${idOf(p, "ТехноПоставка")}], ООО «Альфа-Снаб» — 95 000,00 ₽ [${idOf(p, "Альфа-Снаб")}], ООО «Вектор» — 60 000,00 ₽ [${idOf(p, "Вектор")}]. Ответ частичный.`,
      found:
        "ИП Смирнову выдан аванс 30 000,00 ₽, поставка ещё не отражена.\nПо ООО «Вектор» регистр и документы расходятся: оплата № 466 от 25.03.2026 на 60 000,00 ₽ не проведена.",
    });
    const f = await factsOf(FULL);
    const full = answer({
      direct: `На 15.02.2026 незакрытый остаток есть у одного поставщика: ООО «Альфа-Снаб» — 120 000,00 ₽ [${idOf(f, "Альфа-Снаб")}].`,
      gaps: "Пробелов не обнаружено.",
      next: "Ничего уточнять не нужно.",
    });
    for (const [q, text, outcome] of [
      [PARTIAL, good, "PARTIALLY_ANSWERED"],
      [FULL, full, "FULLY_ANSWERED"],
    ] as const) {
      const { r, final, tokens, artifacts, messages } = await ask(q, text);
      expect(final.outcome).toBe(outcome);
      expect(final.validation).toMatchObject({ ok: true, issues: [] });
      expect(eventsNamed(r, "answer_replaced")).toEqual([]);
      expect(tokens).toBe(text);
      expect(final.answer).toBe(text);
      expect(final.package.composed_by).toBe("model");
      // the package is read from the model's own text
      expect(final.package.short_answer).toBe(text.split("\n\n")[0]!.replace("**Коротко.** ", ""));
      expect(
        final.package.claims.filter((c) => c.kind === "evidence").flatMap((c) => c.evidence_ids).length,
      ).toBeGreaterThan(0);
      expect(artifacts.final_answer_package).toEqual(final.package);
      expect(artifacts.rejected_answer).toBeNull();
      expect(messages.at(-1)!.text).toBe(text);
    }
  });

  it("a model stream that breaks off after checked sentences went out is replaced too", async () => {
    const text = answer({
      direct: "На 10.04.2026 незакрытые остатки есть у трёх поставщиков. Ответ частичный — ограничения ниже.",
    });
    llm.reset();
    llm.script("planner", ...PARTIAL.planner);
    llm.script("answer", { content: text, truncateAfter: text.indexOf("Ответ частичный") + 20 });
    const r = await postSse(
      `${app.url}/v1/evidence/conversations/${await conversation()}/messages`,
      { text: PARTIAL.text },
      A,
    );
    const tokens = eventsNamed(r, "token")
      .map((e) => e.delta)
      .join("");
    const final = eventsNamed(r, "final")[0] as unknown as Final;
    expect(tokens.length).toBeGreaterThan(0);
    expect(text.startsWith(tokens)).toBe(true);
    const names = r.events.map((e) => e.event);
    expect(names.indexOf("answer_replaced")).toBeGreaterThan(names.lastIndexOf("token"));
    expect(names.indexOf("answer_replaced")).toBeLessThan(names.indexOf("final"));
    expect(eventsNamed(r, "answer_replaced")[0]).toMatchObject({ text: final.answer });
    expect(["model_failed", "validation_failed"]).toContain(eventsNamed(r, "answer_replaced")[0]!.reason);
    expect(final.package.composed_by).toBe("deterministic");
  });

  it("the composed answer itself, given back as the model's prose, passes for every kind of question", async () => {
    const none: string[] = [];
    for (const text of [
      PARTIAL.text,
      FULL.text,
      "Хвосты по поставщикам на 01.01.2020",
      "Любые незакрытые остатки по поставщикам на 28.02.2026",
      "Какое сальдо по ООО «Вектор» на 10.04.2026?",
      "Какое сальдо по ООО «Альфа-Снаб» на 31.03.2026?",
      "Какие незакрытые документы по ООО «Альфа-Снаб» на 10.04.2026?",
      "Покажи цепочку оплат по ТехноПоставке на 10.04.2026",
      "Какие незакрытые документы по ООО «Гамма»?",
      "Какая погода в Москве?",
    ]) {
      const q = { text, planner: [] as string[] };
      const composed = (await ask(q)).final;
      if (composed.package.composed_by !== "deterministic") continue;
      const again = await ask(q, composed.answer);
      if (!again.final.validation.ok)
        none.push(`${text} [${composed.outcome}]: ${again.final.validation.issues.join(" | ")}`);
      else expect(again.final.answer).toBe(composed.answer);
    }
    expect(none).toEqual([]);
  });

  it("counts what was tried", () => {
    // every adversarial answer above was blocked
    expect({ tried, blocked }).toEqual({ tried: 12, blocked: 12 });
  });
});
