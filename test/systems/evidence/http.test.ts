import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { demoStdioEndpoint } from "../../../systems/evidence/mcp-config";
import { closeEvidenceMcp, useEvidenceMcp } from "../../../systems/evidence/routes";
import { useFetchServers, useTestServer } from "../../utils/server";
import { eventsNamed, postSse } from "../../utils/sse";
import type { ScriptStep } from "../../utils/scripted-llm";
import { idsOf, replyTo } from "./menu-choice";
import { interpreterReply, NO_CRITIC_POINTS, planStep, SUPPLIERS_QUESTION } from "../../utils/evidence-api";
import { plannedBy, useOwnMcpAndSlowCopy } from "../../utils/systems-evidence";
import { openConversation } from "../../utils/systems-conversations";

const A = { authorization: "Bearer tok-a" };
const B = { authorization: "Bearer tok-b" };
const debugDir = mkdtempSync(join(tmpdir(), "evidence-debug-"));
const serveFetch = useFetchServers();

const online = useTestServer({ llm: true, tokens: "a:tok-a,b:tok-b", env: { AI_DEBUG: "true", DEBUG_DIR: debugDir } });
const offline = useTestServer({ over: online });
const llm = online.llm;
// The online server reaches the demo MCP server over Streamable HTTP at its own /v1/evidence/mcp.
const faultyUrl = useOwnMcpAndSlowCopy(online, A, serveFetch, [offline]);
afterAll(() => rmSync(debugDir, { recursive: true, force: true }));

type Final = {
  outcome: string;
  reasonCodes: string[];
  answer: string;
  runId: string;
  package: {
    composed_by: string;
    clarifying_question: string | null;
    claims: { kind: string; evidence_ids: string[] }[];
  };
  coverage: { critic: { model: string }; answerability: string };
  premises: { kind: string; key: string; status: string }[];
  validation: { ok: boolean; issues: string[] };
  modelCalls: { preparatory: number; final: number };
};

const DETECT = "detect_open_supplier_settlements";
/** The seed question on the working date: partially answered with an assumed reading and date, a conflict and a missing document. */
const SEED_PARTIAL = {
  outcome: "PARTIALLY_ANSWERED",
  reasonCodes: [
    "AMBIGUOUS_BUSINESS_TERM",
    "MISSING_AS_OF_DATE",
    "CONFLICTING_EVIDENCE",
    "MISSING_SUPPORTING_DOCUMENT",
    "ASSUMPTION_APPLIED_EXPLICITLY",
  ],
};
/** An interpreter reply the way a model would write it. */
const interp = (o: { intent: string; counterparty?: string; date?: string; reading?: string; blocking?: boolean }) =>
  interpreterReply({ question: SUPPLIERS_QUESTION, shape: "list_with_explanation", ...o });

const conversation = (base: string, headers: Record<string, string> = A) => openConversation(base, "evidence", headers);

async function ask(
  id: string,
  text: string,
  script: { planner?: string[]; answer?: ScriptStep } = {},
  base = online.url,
  headers: Record<string, string> = A,
) {
  if (base === online.url) {
    llm.reset();
    if (script.planner) llm.script("planner", ...script.planner);
    if (script.answer) llm.script("answer", script.answer);
  }
  const r = await postSse(`${base}/v1/evidence/conversations/${id}/messages`, { text }, headers);
  const final = eventsNamed(r, "final")[0] as unknown as Final | undefined;
  expect(eventsNamed(r, "error")).toEqual([]);
  expect(r.events.at(-1)!.event).toBe("done");
  return {
    r,
    final: final!,
    tokens: eventsNamed(r, "token")
      .map((e) => e.delta)
      .join(""),
  };
}

const artifacts = async (runId: string, headers = A) =>
  (await (await fetch(`${online.url}/v1/evidence/runs/${runId}`, { headers })).json()) as {
    artifacts: Record<string, any>;
  };

describe("evidence workflow over HTTP (scripted model, demo MCP server over Streamable HTTP)", () => {
  it("«По каким поставщикам висят хвосты?»: assumed reading and date, a conflict and a missing invoice → partially answered", async () => {
    const id = await conversation(online.url);
    const text = "По каким поставщикам висят хвосты?";
    // the model chooses from the menu: the engine's conclusion, one party's balance, the conflict, gaps and a next step
    const modelAnswer = replyTo((p) => ({
      opening: "Здравствуйте! Вот результаты проверки.",
      short: idsOf(p, "conclusion"),
      checked: p.engine_choice.checked,
      found: [...idsOf(p, "open_balance", /ТехноПоставка/), ...idsOf(p, "conflict")],
      not_established: idsOf(p, "gap"),
      next_step: p.engine_choice.next_step.slice(0, 1),
      closing: null,
    }));
    const { r, final, tokens } = await ask(id, text, {
      planner: plannedBy(interp({ intent: DETECT }), NO_CRITIC_POINTS),
      answer: modelAnswer,
    });
    expect(final).toMatchObject(SEED_PARTIAL);
    // the model's choice was valid whole and is the answer that was streamed, rendered by the engine
    expect(final.validation).toMatchObject({ ok: true, issues: [] });
    expect(final.package.composed_by).toBe("model");
    expect(final.answer).toMatch(/- АО «ТехноПоставка»: остаток 150 000,00 ₽[^\n]*\[F2\]/);
    expect(final.answer).toMatch(/^Здравствуйте! Вот результаты проверки\.\n\n\*\*Коротко\.\*\* На /);
    expect(tokens).toBe(final.answer);
    expect(eventsNamed(r, "answer_replaced")).toEqual([]);
    // Interpreter, planner (invalid twice: one repair, then the deterministic plan), critic; one streamed answer
    expect(llm.count("planner")).toBe(4);
    expect(
      llm.calls
        .filter((c) => c.role === "planner")
        .every((c) => (c.body.response_format as { type: string }).type === "json_schema"),
    ).toBe(true);
    const answerCall = llm.calls.find((c) => c.role === "answer")!;
    expect((answerCall.body.response_format as { type: string }).type).toBe("json_schema");
    expect(final.modelCalls).toEqual({ preparatory: 4, final: 1 });
    expect(
      final.premises
        .filter((p) => p.status === "assumed")
        .map((p) => p.kind)
        .sort(),
    ).toEqual(["business_term", "time_scope"]);
    expect(final.coverage.critic.model).toBe("used");

    const stages = eventsNamed(r, "stage").map((s) => `${s.stageId} ${s.name}`);
    expect(stages).toEqual([
      "00 metadata",
      "01 original-request",
      "02 interpretation",
      "03 conversation-context",
      "04 plan",
      "05 tool-runs",
      "06 evidence",
      "07 coverage",
      "08 prompt-manifest",
      "09 answer",
      "10 debug-view",
    ]);
    expect(readdirSync(join(debugDir, final.runId))).toHaveLength(11);

    const { artifacts: a } = await artifacts(final.runId);
    expect(a.query_frame.original_user_question).toBe(text);
    expect(a.query_frame.normalized_question).not.toBe(text);
    expect(a.execution_plan.planned_by).toBe("deterministic");
    expect(a.tool_runs.length).toBeGreaterThanOrEqual(10);
    expect(a.evidence_bundle.conflicts[0].entity).toBe("ООО «Вектор»");
    expect(a.coverage_report.outcome).toBe("PARTIALLY_ANSWERED");
    const [run] = await online.db.sql`select kind, status, outcome, reason_codes from runs where id = ${final.runId}`;
    expect(run).toEqual({
      kind: "evidence",
      status: "completed",
      outcome: "PARTIALLY_ANSWERED",
      reason_codes: final.reasonCodes,
    });
  });

  it("an ambiguous business term: asks first, answers after the user picks a reading, and the next turn inherits it", async () => {
    const id = await conversation(online.url);
    const q = "По каким поставщикам висят хвосты?";
    const t1 = await ask(id, q, { planner: [interp({ intent: DETECT, blocking: true }), NO_CRITIC_POINTS] });
    expect(t1.final).toMatchObject({
      outcome: "BLOCKED_BY_AMBIGUITY",
      reasonCodes: [
        "AMBIGUOUS_BUSINESS_TERM",
        "MISSING_AS_OF_DATE",
        "MULTIPLE_VALID_INTERPRETATIONS",
        "NEEDS_USER_CONFIRMATION",
      ],
    });
    expect(t1.final.package.clarifying_question).toMatch(/^Что считать «хвосты»/);
    expect(llm.count("planner")).toBe(2); // no plan, no tools — but the critic ran
    expect((await artifacts(t1.final.runId)).artifacts.tool_runs).toEqual([]);

    const t2 = await ask(id, "Любые незакрытые остатки, на 15.02.2026", {
      planner: plannedBy(
        interp({ intent: DETECT, reading: "open_settlement_balance", date: "15.02.2026" }),
        NO_CRITIC_POINTS,
      ),
    });
    expect(t2.final).toMatchObject({ outcome: "FULLY_ANSWERED", reasonCodes: [] });
    expect(t2.final.premises.map((p) => p.status)).toEqual(["confirmed", "confirmed", "confirmed"]);
    expect(t2.final.answer).toMatch(/ООО «Альфа-Снаб»: остаток 120 000,00 ₽/);
    expect((await artifacts(t2.final.runId)).artifacts.query_frame.context_question).toBe(q);

    // No model help at all this time (every structured reply is `{}`): the deterministic path reads the follow-up.
    const t3 = await ask(id, "А на 10.04.2026?");
    expect(t3.final.outcome).toBe("PARTIALLY_ANSWERED");
    expect(t3.final.reasonCodes).toEqual(["CONFLICTING_EVIDENCE", "MISSING_SUPPORTING_DOCUMENT"]);
    expect(t3.final.premises.find((p) => p.kind === "business_term")?.status).toBe("inherited");
    expect(t3.final.coverage.critic.model).toBe("failed");
    expect(t3.final.package.composed_by).toBe("deterministic");

    const conv = (await (await fetch(`${online.url}/v1/evidence/conversations/${id}`, { headers: A })).json()) as {
      messages: { role: string; meta: { outcome?: string } }[];
      state: { resolved_business_terms: { premise: string }[]; active_time_scope: { as_of_date: string } };
    };
    expect(conv.messages).toHaveLength(6);
    expect(conv.messages[1]!.meta.outcome).toBe("BLOCKED_BY_AMBIGUITY");
    expect(conv.state.active_time_scope.as_of_date).toBe("2026-04-10");
  });

  it("a missing as-of date is assumed and said; the follow-up names it and inherits the counterparty; a model plan is used after one repair", async () => {
    const id = await conversation(online.url);
    const badPlan = JSON.stringify({
      goal: "сальдо",
      steps: [
        planStep("S1", "resolve_counterparty", { query: "Альфа-Снаб" }, { type: "resolve", purpose: "кто" }),
        planStep("S2", "resolve_period_or_asof", {}, { type: "date", purpose: "дата" }),
        planStep(
          "S3",
          "get_balance_as_of",
          { counterparty_id: "cp-alfa-snab", as_of_date: "$S2.as_of_date" },
          { type: "balance", depends_on: ["S1", "S2"], purpose: "сальдо" },
        ),
      ],
    });
    const goodPlan = badPlan.replace('"counterparty_id":"cp-alfa-snab"', '"counterparty_id":"$S1.counterparty_id"');
    const t1 = await ask(id, "Какое сальдо по ООО «Альфа-Снаб»?", {
      planner: [
        interp({ intent: "counterparty_balance", counterparty: "Альфа-Снаб" }),
        badPlan,
        goodPlan,
        NO_CRITIC_POINTS,
      ],
    });
    // the model's plan left out the built-in plan's checks: the engine added them, and says the model's route was shallow
    expect(t1.final).toMatchObject({
      outcome: "PARTIALLY_ANSWERED",
      reasonCodes: ["MISSING_AS_OF_DATE", "EVIDENCE_DEPTH_LIMIT", "ASSUMPTION_APPLIED_EXPLICITLY"],
    });
    expect(t1.final.answer).toMatch(/Сальдо расчётов с ООО «Альфа-Снаб» на 10\.04\.2026: 95 000,00 ₽/);
    const plan = (await artifacts(t1.final.runId)).artifacts.execution_plan;
    expect(plan.planned_by).toBe("llm");
    // the model's three steps, extended to the built-in plan's floor (documents and payments behind the balance)
    expect(plan.steps.map((s: { tool: string }) => s.tool)).toEqual([
      "resolve_counterparty",
      "resolve_period_or_asof",
      "get_balance_as_of",
      "get_unclosed_documents_for_counterparty",
      "get_payment_chain",
    ]);
    const repair = llm.calls.filter((c) => c.role === "planner")[2]!;
    expect(repair.messages.at(-1)!.content).toMatch(/counterparty_id должен ссылаться/);

    const t2 = await ask(id, "А на 31 марта?", {
      planner: plannedBy(interp({ intent: "counterparty_balance", date: "31 марта" }), NO_CRITIC_POINTS),
    });
    expect(t2.final).toMatchObject({ outcome: "FULLY_ANSWERED", reasonCodes: [] });
    expect(t2.final.premises.find((p) => p.key === "counterparty")).toMatchObject({ status: "inherited" });
    expect(t2.final.premises.find((p) => p.kind === "time_scope")).toMatchObject({ status: "confirmed" });
  });

  it("a tool timeout blocks by tooling, and the answer claims no figures", async () => {
    await useEvidenceMcp(online.deps, { endpoint: { kind: "http", url: faultyUrl() }, timeoutMs: 300 });
    try {
      const id = await conversation(online.url);
      const { final } = await ask(id, "По каким поставщикам висят хвосты на 31.03.2026?");
      expect(final.outcome).toBe("BLOCKED_BY_TOOLING");
      expect(final.reasonCodes).toEqual([
        "AMBIGUOUS_BUSINESS_TERM",
        "MCP_TIMEOUT",
        "ROUTE_EXECUTION_ABORTED",
        "ASSUMPTION_APPLIED_EXPLICITLY",
      ]);
      expect(final.answer).toMatch(/Не удалось получить данные/);
      expect(final.answer).not.toMatch(/\d{1,3} \d{3},\d{2} ₽/);
      expect(final.package.claims.filter((c) => c.kind === "evidence")).toEqual([]);
    } finally {
      await useEvidenceMcp(online.deps, {
        endpoint: { kind: "http", url: `${online.url}/v1/evidence/mcp`, headers: A },
      });
    }
  });

  it("empty results stay apart: no data before the base starts, an unknown counterparty, and «all settled» as a real finding", async () => {
    const id = await conversation(online.url);
    const none = await ask(id, "Хвосты по поставщикам на 01.01.2020");
    expect(none.final).toMatchObject({
      outcome: "BLOCKED_BY_MISSING_DATA",
      reasonCodes: ["AMBIGUOUS_BUSINESS_TERM", "NO_MATCH_IN_1C", "ASSUMPTION_APPLIED_EXPLICITLY"],
    });
    expect(none.final.answer).toMatch(/это не означает, что долгов нет/);

    const unknown = await ask(await conversation(online.url), "Какие незакрытые документы по ООО «Гамма»?");
    expect(unknown.final).toMatchObject({
      outcome: "FAILED_TO_BIND_ENTITIES",
      reasonCodes: ["MISSING_AS_OF_DATE", "ENTITY_NOT_RESOLVED", "NO_MATCH_IN_1C", "ASSUMPTION_APPLIED_EXPLICITLY"],
    });

    const settled = await ask(await conversation(online.url), "Любые незакрытые остатки по поставщикам на 28.02.2026");
    expect(settled.final).toMatchObject({ outcome: "FULLY_ANSWERED", reasonCodes: [] });
    expect(settled.final.answer).toMatch(/не найдено/);
    expect(settled.final.answer).toMatch(/ненулевых остатков нет \(просмотрено движений регистра: 6\) \[F\d+\]/);
  });

  it("conflicting evidence makes the answer partial; an amount the model writes is never shown, the gaps it drops are", async () => {
    const id = await conversation(online.url);
    // a model that writes its own figure in the opening, invents a claim and leaves out the gaps
    const invented = replyTo((p) => ({
      opening: "Долг ООО «Вектор» — 1 000 000,00 ₽",
      short: [...idsOf(p, "conclusion"), "C999"],
      checked: [],
      found: idsOf(p, "open_balance"),
      not_established: [],
      next_step: [],
      closing: "Ничего уточнять не нужно.",
    }));
    const { r, final, tokens } = await ask(id, "Какое сальдо по ООО «Вектор» на 10.04.2026?", {
      planner: plannedBy(
        interp({ intent: "counterparty_balance", counterparty: "Вектор", date: "10.04.2026" }),
        NO_CRITIC_POINTS,
      ),
      answer: invented,
    });
    expect(final).toMatchObject({ outcome: "PARTIALLY_ANSWERED", reasonCodes: ["CONFLICTING_EVIDENCE"] });
    expect(final.validation.ok).toBe(false);
    const issues = final.validation.issues.join("\n");
    expect(issues).toMatch(/opening: текст модели отброшен — символы вне связующего текста/);
    expect(issues).toMatch(/«C999» нет в меню/);
    expect(issues).toMatch(/closing: текст модели отброшен/);
    expect(final.package.composed_by).toBe("model");
    // the invented figure never went out, nothing was replaced; the conflict and its gap are shown anyway
    expect(tokens).not.toMatch(/1 000 000|Ничего уточнять/);
    expect(tokens).toBe(final.answer);
    expect(eventsNamed(r, "answer_replaced")).toEqual([]);
    expect(final.answer).toMatch(/оплата № 466 от 25\.03\.2026 на 60 000,00 ₽ не проведена/);
    expect(final.answer).toMatch(/\*\*Что не удалось установить\.\*\*\n- /);
  });

  it("a question outside the domain is misrouted, with no tool call", async () => {
    const id = await conversation(online.url);
    const { final } = await ask(id, "Какая погода в Москве?", {
      planner: [interp({ intent: "unsupported" }), NO_CRITIC_POINTS],
    });
    expect(final).toMatchObject({ outcome: "MISROUTED", reasonCodes: [] });
    expect((await artifacts(final.runId)).artifacts.tool_runs).toEqual([]);
  });

  it("rejects bad input, keeps tenants apart, and counts outcomes per kind, class and reason code", async () => {
    const id = await conversation(online.url);
    const bad = await postSse(`${online.url}/v1/evidence/conversations/${id}/messages`, { text: "  " }, A);
    expect(bad.status).toBe(400);
    expect((await fetch(`${online.url}/v1/evidence/conversations/nope`, { headers: A })).status).toBe(404);
    // A run id that is not a UUID names no run: 404, not a database error.
    const noRun = await fetch(`${online.url}/v1/evidence/runs/nope`, { headers: A });
    expect(noRun.status).toBe(404);
    expect(((await noRun.json()) as { error: { code: string } }).error.code).toBe("not_found");
    const other = await postSse(`${online.url}/v1/evidence/conversations/${id}/messages`, { text: "хвосты?" }, B);
    expect(other.status).toBe(404);

    const stats = (await (await fetch(`${online.url}/v1/stats/outcomes?kind=evidence`, { headers: A })).json()) as {
      total: number;
      byOutcome: { outcome: string; runs: number }[];
      byReasonCode: { reasonCode: string; runs: number }[];
    };
    const byOutcome = Object.fromEntries(stats.byOutcome.map((o) => [o.outcome, o.runs]));
    const rows = await online.db.sql<
      { outcome: string; n: number }[]
    >`select outcome, count(*)::int as n from runs where kind = 'evidence' and tenant_id = 'a' and status <> 'running' group by outcome`;
    expect(byOutcome).toEqual(Object.fromEntries(rows.map((r) => [r.outcome, r.n])));
    expect(byOutcome.MISROUTED).toBeGreaterThanOrEqual(1);
    const classes = (stats as unknown as { byOutcomeClass: { outcomeClass: string; runs: number }[] }).byOutcomeClass;
    expect(classes.reduce((s, c) => s + c.runs, 0)).toBe(stats.total);
    expect(classes.every((c) => c.outcomeClass !== "UNCLASSIFIED")).toBe(true);
    expect(stats.byReasonCode.find((r) => r.reasonCode === "MCP_TIMEOUT")?.runs).toBe(1);
    const theirs = (await (await fetch(`${online.url}/v1/stats/outcomes`, { headers: B })).json()) as { total: number };
    expect(theirs.total).toBe(0);
    expect((await fetch(`${online.url}/v1/stats/outcomes?since=yesterday`, { headers: A })).status).toBe(400);
  });
});

describe("evidence workflow without a model", () => {
  it("answers the seed's question from the demo data alone, and says when it needs a model", async () => {
    const id = await conversation(offline.url, {});
    const { final, tokens } = await ask(id, "По каким поставщикам висят хвосты?", {}, offline.url, {});
    expect(final).toMatchObject(SEED_PARTIAL);
    expect(final.answer).toMatch(/офлайн-режим/);
    expect(tokens).toBe(final.answer);
    expect(final.modelCalls).toEqual({ preparatory: 0, final: 0 });
    const weather = await ask(id, "Какая погода в Москве?", {}, offline.url, {});
    expect(weather.final).toMatchObject({ outcome: "BLOCKED_BY_TOOLING", reasonCodes: ["MODEL_REQUIRED"] });
    // the off-topic turn did not disturb the conversation's context
    const conv = (await (await fetch(`${offline.url}/v1/evidence/conversations/${id}`)).json()) as {
      state: { active_intent: string };
    };
    expect(conv.state.active_intent).toBe(DETECT);
  });

  it("reaches the demo MCP server spawned over stdio", async () => {
    await useEvidenceMcp(offline.deps, {
      endpoint: demoStdioEndpoint(online.dbUrl ? { DATABASE_URL: online.dbUrl } : {}),
      timeoutMs: 20_000,
    });
    try {
      const tools = (await (await fetch(`${offline.url}/v1/evidence/tools`)).json()) as {
        mcp: string;
        tools: string[];
      };
      expect(tools.mcp).toMatch(/^stdio: /);
      expect(tools.tools).toHaveLength(8);
      const { final } = await ask(
        await conversation(offline.url, {}),
        "Какое сальдо по ООО «Вектор» на 10.04.2026?",
        {},
        offline.url,
        {},
      );
      expect(final).toMatchObject({ outcome: "PARTIALLY_ANSWERED", reasonCodes: ["CONFLICTING_EVIDENCE"] });
      expect(existsSync(debugDir)).toBe(true);
    } finally {
      await closeEvidenceMcp(offline.deps);
    }
  }, 120_000);
});
