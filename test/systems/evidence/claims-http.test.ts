// The answer model chooses claims from the run's menu (structured output) and misbehaves the way
// real models do: invented ids, a claim in a block its kind does not belong to, facts smuggled
// into its free text, gaps left out. Over HTTP: every such part is refused with its reason and
// left out, the mandatory claims are shown anyway, the stream carries only the rendered answer (no
// `answer_replaced`), and the stored package, the run's artifacts and the conversation agree. The corpus of
// hand-written replies to the captured prompts is answer-corpus.test.ts.
import { describe, expect, it } from "vitest";
import { useEvidenceMcp } from "../../../systems/evidence/routes";
import { useFetchServers, useTestServer } from "../../utils/server";
import { eventsNamed, postSse } from "../../utils/sse";
import type { ScriptStep } from "../../utils/scripted-llm";
import { idsOf, replyTo, type AnswerPrompt } from "./menu-choice";
import { interpreterReply, NO_CRITIC_POINTS, SUPPLIERS_QUESTION } from "../../utils/evidence-api";
import { ownMcp, plannedBy, useOwnMcpAndSlowCopy } from "../../utils/systems-evidence";
import { openConversation } from "../../utils/systems-conversations";

const A = { authorization: "Bearer tok-a" };
const serveFetch = useFetchServers();

const app = useTestServer({ llm: true, tokens: "a:tok-a" });
const llm = app.llm;
// the same demo server, but the core settlements tool answers too late
const faultyUrl = useOwnMcpAndSlowCopy(app, A, serveFetch);

type Pkg = {
  short_answer: string;
  user_facing_answer: string;
  composed_by: string;
  blocks: { direct: string; found: string[]; not_established: string[]; next_step: string[] };
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

const DETECT = "detect_open_supplier_settlements";
const interp = (o: { date?: string; reading?: string }) =>
  interpreterReply({ intent: DETECT, question: SUPPLIERS_QUESTION, ...o });

/** The seed's question on the working date: partially answered (assumed reading and date, a conflict). */
const PARTIAL = { text: "По каким поставщикам висят хвосты?", planner: plannedBy(interp({}), NO_CRITIC_POINTS) };
/** Any open balance on 15.02.2026: fully answered, one supplier (ООО «Альфа-Снаб», 120 000,00 ₽). */
const FULL = {
  text: "Любые незакрытые остатки по поставщикам на 15.02.2026",
  planner: plannedBy(interp({ reading: "open_settlement_balance", date: "15.02.2026" }), NO_CRITIC_POINTS),
};
/** The settlements tool times out: blocked by tooling. */
const TIMEOUT = { text: "По каким поставщикам висят хвосты на 31.03.2026?", planner: [] as string[], faulty: true };

const conversation = () => openConversation(app.url, "evidence", A);

async function ask(q: { text: string; planner: string[]; faulty?: boolean }, ...answer: ScriptStep[]) {
  if (q.faulty) await useEvidenceMcp(app.deps, { endpoint: { kind: "http", url: faultyUrl() }, timeoutMs: 300 });
  try {
    llm.reset();
    if (q.planner.length) llm.script("planner", ...q.planner);
    if (answer.length) llm.script("answer", ...answer);
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
    if (q.faulty) await useEvidenceMcp(app.deps, ownMcp(app.url, A));
  }
}

type Choice = Partial<Record<"short" | "checked" | "found" | "not_established" | "next_step", string[]>> & {
  opening?: string | null;
  closing?: string | null;
};
/** The engine's own choice with the model's changes: what a model that mostly agrees writes. */
const choose = (change: (p: AnswerPrompt) => Choice) =>
  replyTo((p) => ({ opening: null, closing: null, ...p.engine_choice, ...change(p) }));

/** One source: what streamed is the answer, nothing replaced it, and `final`, the run and the conversation agree. */
function expectOneAnswer(x: Awaited<ReturnType<typeof ask>>) {
  expect(x.tokens).toBe(x.final.answer);
  expect(eventsNamed(x.r, "answer_replaced")).toEqual([]);
  expect(x.final.package.user_facing_answer).toBe(x.final.answer);
  expect(x.artifacts.final_answer_package).toEqual(x.final.package);
  expect(x.messages.at(-1)).toMatchObject({ role: "assistant", text: x.final.answer });
}

/** A refused part: its reason is in the validation and with the run; the lie is not shown. */
async function expectRefused(q: typeof PARTIAL, reply: ScriptStep, issue: RegExp, hidden?: RegExp) {
  const x = await ask(q, reply);
  expectOneAnswer(x);
  expect(x.final.validation.ok).toBe(false);
  expect(x.final.validation.issues.join("\n")).toMatch(issue);
  expect(x.artifacts.rejected_answer.issues).toEqual(x.final.validation.issues);
  if (hidden) expect(x.final.answer).not.toMatch(hidden);
  // the conclusion leads «Коротко» whatever the model chose
  expect(x.final.answer).toMatch(/^(?:[^\n]+\n\n)?\*\*Коротко\.\*\* /);
  expect(x.final.package.claims[0]).toMatchObject({ text: expect.any(String) });
  return x;
}

describe("the Evidence answer as a choice over the claims menu (scripted model, demo MCP server)", () => {
  it("a model's valid choice is shown as chosen, with its fact-free opening and closing", async () => {
    const x = await ask(
      PARTIAL,
      choose((p) => ({
        opening: "Добрый день! Ниже — результаты проверки.",
        found: [...idsOf(p, "open_balance"), ...idsOf(p, "conflict"), ...idsOf(p, "advance_paid")],
        closing: "Если будут вопросы — обращайтесь.",
      })),
    );
    expectOneAnswer(x);
    expect(x.final.validation).toMatchObject({ ok: true, issues: [] });
    expect(x.final.package.composed_by).toBe("model");
    expect(x.final.answer).toMatch(/^Добрый день! Ниже — результаты проверки\.\n\n\*\*Коротко\.\*\*/);
    expect(x.final.answer).toMatch(/\n\nЕсли будут вопросы — обращайтесь\.$/);
    expect(x.final.answer).toMatch(/АО «ТехноПоставка»: остаток 150 000,00 ₽/);
  });

  it("invented ids, a claim in a foreign block and a repeat are refused; the rest is shown", async () => {
    await expectRefused(
      PARTIAL,
      choose((p) => ({ found: [...p.engine_choice.found, p.engine_choice.found[0]!, "C404", "F2"] })),
      /повтор отброшен[\s\S]*«C404» нет в меню[\s\S]*«F2» нет в меню/,
    );
    // the conclusion moved out of «Коротко», a balance offered as a next step
    const x = await expectRefused(
      PARTIAL,
      choose((p) => ({
        short: [],
        found: [...idsOf(p, "conclusion"), ...p.engine_choice.found],
        next_step: [...idsOf(p, "open_balance").slice(0, 1), ...p.engine_choice.next_step],
      })),
      /«Что найдено»: C\d+ \(conclusion\) не может стоять в этом блоке[\s\S]*«Что уточнить \/ следующий шаг»: C\d+ \(open_balance\)/,
    );
    expect(x.final.package.blocks.next_step.join()).not.toMatch(/остаток/);
  });

  it("facts smuggled into the free text are dropped, never shown", async () => {
    for (const [opening, hidden] of [
      ["Долг перед ООО «Ромашка» — 150 000,00 ₽.", /Ромашка/],
      ["Задолженность погашена полностью, все расчёты закрыты.", /погашена/],
      ["~~Здравствуйте~~", /~~/],
      ["Хвостов по поставщикам нет", /Хвостов/],
    ] as const)
      await expectRefused(
        PARTIAL,
        choose(() => ({ opening })),
        /opening: текст модели отброшен/,
        hidden,
      );
  });

  it("after the settlements tool timed out, the gaps are shown although the model left them out", async () => {
    const x = await expectRefused(
      TIMEOUT,
      choose(() => ({ not_established: [], next_step: [], closing: "Ничего уточнять не нужно." })),
      /\(gap\) обязателен в блоке «Что не удалось установить» — добавлен/,
      /Ничего уточнять не нужно/,
    );
    expect(x.final.outcome).toBe("BLOCKED_BY_TOOLING");
    expect(x.final.package.blocks.not_established.length).toBeGreaterThan(0);
    expect(x.final.answer).toMatch(/Не удалось получить данные/);
  });

  it("a direct question gets its derived claim in «Коротко», offline choice and model choice alike", async () => {
    const q = { ...FULL, text: "Сколько всего мы должны поставщикам на 15.02.2026?" };
    const engine = await ask(q); // the model gives no choice: the engine's own is streamed
    expectOneAnswer(engine);
    expect(engine.final.package.composed_by).toBe("deterministic");
    expect(engine.final.package.short_answer).toMatch(/Всего наш долг перед поставщиками: \d[\d  ]*,\d\d ₽ .*\[F\d+\]/);
    const model = await ask(
      q,
      choose((p) => ({ short: [...idsOf(p, "conclusion"), ...idsOf(p, "total", /^Всего наш долг/)] })),
    );
    expectOneAnswer(model);
    expect(model.final.validation.ok).toBe(true);
    expect(model.final.package.short_answer).toBe(engine.final.package.short_answer);
  });

  it("a broken or schema-less model: the engine's own choice streams, nothing is replaced", async () => {
    for (const broken of [
      [{ status: 500 }, { status: 500 }, { status: 500 }],
      ["Вот ответ: всё хорошо", "{}"],
    ] as ScriptStep[][]) {
      const x = await ask(FULL, ...broken);
      expectOneAnswer(x);
      expect(x.final.package.composed_by).toBe("deterministic");
      expect(x.final.validation).toMatchObject({ ok: true });
    }
  });
});
