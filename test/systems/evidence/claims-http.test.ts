// The answer model misbehaves the way real models do; the closed-world check must keep every
// rejected sentence off the wire (no `token` carries it), replace the answer before `final`, and
// store a package that agrees with itself and with what the client was told to show. A model that
// keeps the contract (slots, connective words) is shown, rendered from the evidence.
import { serve, type ServerType } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evidenceMcpHttpHandler } from "../../../systems/evidence/mcp-server/server";
import { closeEvidenceMcp, useEvidenceMcp } from "../../../systems/evidence/routes";
import { draftTemplate } from "../../../systems/evidence/answer-slots";
import { HEADINGS } from "../../../systems/evidence/claim-check";
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

/** A model answer in the contract's shape; `lie` is literal prose a lying model adds after the conclusion. */
const answer = (parts: { direct?: string; checked?: string; found?: string; gaps?: string; next?: string }) =>
  [
    `**Коротко.** {K0}${parts.direct ? ` ${parts.direct}` : ""}`,
    `**Что проверено.**\n${parts.checked ?? "- {P1}"}`,
    `**Что найдено.**\n${parts.found ?? "- {N1}"}`,
    `**Что не удалось установить.**\n${parts.gaps ?? "- {U1}"}`,
    `**Что уточнить / следующий шаг.**\n${parts.next ?? "- {S1}"}`,
  ].join("\n\n");

let tried = 0;
let blocked = 0;

/** A rejected answer: the claim never went out, the composed answer replaced it before `final`, and everything stored agrees. */
async function expectReplaced(q: typeof PARTIAL, text: string, claim: RegExp, issue: RegExp) {
  tried++;
  const { r, final, tokens, artifacts, messages } = await ask(q, text);
  expect(text).toMatch(claim); // the script does carry the claim
  expect(tokens).not.toMatch(claim);
  expect(tokens).not.toMatch(/[{}]/); // released sentences were rendered; no raw slot reached the client
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

const OUTSIDE = /слова вне слотов|цифры вне слота/;

describe("the Evidence answer through the closed-world check (scripted model, demo MCP server)", () => {
  it("a false «no debts» after the settlements tool timed out (BLOCKED_BY_TOOLING) is replaced", async () => {
    await expectReplaced(
      TIMEOUT,
      answer({ direct: "Хвостов по поставщикам нет — все расчёты закрыты." }),
      /Хвостов по поставщикам нет/,
      /слова вне слотов: «хвостов»/,
    );
    // hedged and universal, with no figure and no name
    await expectReplaced(
      TIMEOUT,
      answer({ found: "- По всей видимости, все поступления оплачены." }),
      /все поступления оплачены/,
      /«по», «всей», «видимости»|«всей»/,
    );
  });

  it("a real amount and its fact id moved to another party is replaced", async () => {
    const facts = await factsOf(PARTIAL);
    const techno = idOf(facts, "ТехноПоставка");
    await expectReplaced(
      PARTIAL,
      answer({ direct: `Наш долг перед ООО «Ромашка» — 150 000,00 ₽ [${techno}].` }),
      /Ромашка/,
      OUTSIDE,
    );
    // written with slots: ТехноПоставка's amount next to Альфа-Снаб's name
    const alfa = idOf(facts, "Альфа-Снаб");
    await expectReplaced(
      PARTIAL,
      answer({ found: `- {N1}\n- У {${alfa}.party} сумма {${techno}.amount}.` }),
      new RegExp(`\\{${alfa}\\.party\\} сумма \\{${techno}`),
      /поля разных фактов/,
    );
  });

  it("a figure carried across a sentence, a wrong citation and a fact of another turn are replaced", async () => {
    const facts = await factsOf(PARTIAL);
    const techno = idOf(facts, "ТехноПоставка");
    const alfa = idOf(facts, "Альфа-Снаб");
    await expectReplaced(
      PARTIAL,
      answer({ found: `- {${alfa}.party}.\n- Его долг {${techno}.amount}.` }),
      /Его долг/,
      /«его», «долг»|«долг»/,
    );
    await expectReplaced(
      PARTIAL,
      answer({ found: `- {${alfa}} [${techno}].` }),
      /\{F\d+\} \[F\d+\]/,
      /не относится к фактам/,
    );
    await expectReplaced(PARTIAL, answer({ found: "- {F97.amount}" }), /F97/, /факта F97 нет в данных этой проверки/);
  });

  it("an invented counterparty, an amount in words and a month no step queried are replaced", async () => {
    await expectReplaced(
      PARTIAL,
      answer({ direct: "Висит долг перед Бета-Сервисом — две тысячи пятьдесят рублей." }),
      /Бета-Сервис/,
      /«висит», «долг», «перед», «бета»|«бета»/,
    );
    const facts = await factsOf(PARTIAL);
    await expectReplaced(
      PARTIAL,
      answer({ found: `- В январе {${idOf(facts, "Альфа-Снаб")}.amount}.` }),
      /В январе/,
      /«январе»/,
    );
  });

  it("inflated counts and a completeness claim on a PARTIALLY_ANSWERED run are replaced", async () => {
    await expectReplaced(PARTIAL, answer({ direct: "Хвосты висят по семи поставщикам." }), /семи/, /«семи»/);
    await expectReplaced(
      PARTIAL,
      answer({ gaps: "- Пробелов нет: данные проверены полностью." }),
      /Пробелов нет/,
      /«пробелов»/,
    );
    await expectReplaced(PARTIAL, answer({ direct: "Ответ полный." }), /Ответ полный/, /«полный»/);
  });

  it("an answer without the engine's conclusion is replaced", async () => {
    const facts = await factsOf(PARTIAL);
    const text = answer({}).replace("{K0}", `{${idOf(facts, "Альфа-Снаб")}}`);
    await expectReplaced(PARTIAL, text, /^\*\*Коротко\.\*\* \{F/, /нет вывода \{K0\}/);
  });

  it("a model answer that keeps the contract is shown, rendered from the evidence, on a partial and a full run", async () => {
    const p = await factsOf(PARTIAL);
    const f = await factsOf(FULL);
    const techno = idOf(p, "ТехноПоставка");
    const good = answer({
      found: `- У {${techno}.party} {${techno}.kind} составляет {${techno}.amount}.\n- {${idOf(p, "Альфа-Снаб")}}`,
    });
    const full = answer({
      found: `- По данным учета {${idOf(f, "Альфа-Снаб")}.party}: {${idOf(f, "Альфа-Снаб")}.direction}, сумма {${idOf(f, "Альфа-Снаб")}.amount}.`,
    });
    for (const [q, text, outcome, figure] of [
      [
        PARTIAL,
        good,
        "PARTIALLY_ANSWERED",
        `АО «ТехноПоставка» остаток задолженности составляет 150 000,00 ₽ [${techno}].`,
      ],
      [
        FULL,
        full,
        "FULLY_ANSWERED",
        `ООО «Альфа-Снаб»: наш долг поставщику, сумма 120 000,00 ₽ [${idOf(f, "Альфа-Снаб")}].`,
      ],
    ] as const) {
      const { r, final, tokens, artifacts, messages } = await ask(q, text);
      expect(final.outcome).toBe(outcome);
      expect(final.validation).toMatchObject({ ok: true, issues: [] });
      expect(eventsNamed(r, "answer_replaced")).toEqual([]);
      expect(final.answer).not.toMatch(/[{}]/);
      expect(final.answer).toContain(figure);
      expect(tokens).toBe(final.answer);
      expect(final.package.composed_by).toBe("model");
      // the conclusion is the engine's, the package read from the rendered text
      expect(final.package.short_answer).toBe(final.answer.split("\n\n")[0]!.replace("**Коротко.** ", ""));
      expect(
        final.package.claims.filter((c) => c.kind === "evidence").flatMap((c) => c.evidence_ids).length,
      ).toBeGreaterThan(0);
      expect(artifacts.final_answer_package).toEqual(final.package);
      expect(artifacts.rejected_answer).toBeNull();
      expect(messages.at(-1)!.text).toBe(final.answer);
    }
  });

  it("a model stream that breaks off after checked sentences went out is replaced too", async () => {
    const text = answer({});
    llm.reset();
    llm.script("planner", ...PARTIAL.planner);
    llm.script("answer", { content: text, truncateAfter: text.indexOf("**Что найдено") + 5 });
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
    expect(tokens).not.toMatch(/[{}]/);
    const names = r.events.map((e) => e.event);
    expect(names.indexOf("answer_replaced")).toBeGreaterThan(names.lastIndexOf("token"));
    expect(names.indexOf("answer_replaced")).toBeLessThan(names.indexOf("final"));
    expect(eventsNamed(r, "answer_replaced")[0]).toMatchObject({ text: final.answer });
    expect(["model_failed", "validation_failed"]).toContain(eventsNamed(r, "answer_replaced")[0]!.reason);
    expect(final.package.composed_by).toBe("deterministic");
  });

  it("the composed answer, written as its slots, passes and renders to itself for every kind of question", async () => {
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
      const again = await ask(q, draftTemplate(composed.package as never, HEADINGS));
      if (!again.final.validation.ok)
        none.push(`${text} [${composed.outcome}]: ${again.final.validation.issues.join(" | ")}`);
      else expect(again.final.answer).toBe(composed.answer);
    }
    expect(none).toEqual([]);
  });

  it("counts what was tried", () => {
    // every adversarial answer above was blocked
    expect({ tried, blocked }).toEqual({ tried: 13, blocked: 13 });
  });
});
