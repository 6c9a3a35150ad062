import { describe, expect, it } from "vitest";
import { draftTemplate } from "../../../systems/evidence/answer-slots";
import { checkAnswer, createClaimChecker, HEADINGS } from "../../../systems/evidence/claim-check";
import { CoverageReport, FinalAnswerPackage, type ExecutionPlan } from "../../../systems/evidence/artifacts";
import { composeAnswer } from "../../../systems/evidence/compose";
import { critiqueGround, mergeCritique, ruleCoverage } from "../../../systems/evidence/critic-rules";
import { buildEvidence } from "../../../systems/evidence/evidence-builder";
import { planFor } from "../../../systems/evidence/plan-rules";
import type { CriticRef } from "../../../systems/evidence/model-outputs";
import { dateOut, plan, scope, settlementRow, partyRun, registerRun, toolRun } from "./fixtures";

/** The merge when the critic's reply was used and no point list came with it. */
const mergeUsed = (
  coverage: Parameters<typeof mergeCritique>[0],
  critique: Parameters<typeof mergeCritique>[1],
  ground: Parameters<typeof mergeCritique>[4],
) => mergeCritique(coverage, critique, "used", null, ground);

const P = plan([
  ["S2", "resolve_period_or_asof", true],
  ["S4", "get_open_supplier_settlements", true],
  ["S5", "get_unclosed_documents_for_counterparty", false],
  ["S6", "get_payment_chain", false],
  ["S7", "get_related_closing_documents", false],
]);

function assess(runs: ReturnType<typeof toolRun>[], s = scope()) {
  const bundle = buildEvidence("r1", P, runs, []);
  const r = ruleCoverage({ requestId: "r1", frame: null, scope: s, plan: P, toolRuns: runs, bundle });
  return { bundle, ...r };
}

describe("coverage critic rules", () => {
  it("a confirmed question with consistent evidence is fully answered, with a report all the same", () => {
    const { coverage, bundle } = assess([
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      registerRun([settlementRow("cp-a", "ООО «А»", 1000)]),
    ]);
    expect(CoverageReport.parse(coverage)).toBeTruthy();
    expect(coverage).toMatchObject({ outcome: "FULLY_ANSWERED", answerability: "full", reason_codes: [] });
    expect(bundle.facts.map((f) => f.type)).toEqual(["as_of_date", "open_balance"]);
  });

  it("an empty register with movements is a finding; no movements at all is missing data", () => {
    const empty = assess([
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      toolRun("S4", "get_open_supplier_settlements", "empty", {
        status: "empty",
        note: "",
        as_of_date: "2026-03-31",
        movements_scanned: 12,
        rows: [],
      }),
    ]);
    expect(empty.coverage.outcome).toBe("FULLY_ANSWERED");
    expect(empty.bundle.facts.some((f) => f.type === "no_open_balance")).toBe(true);
    const none = assess([
      toolRun("S2", "resolve_period_or_asof", "success", dateOut("2020-01-01")),
      toolRun(
        "S4",
        "get_open_supplier_settlements",
        "no_match",
        { status: "no_match", note: "нет движений", as_of_date: "2020-01-01", movements_scanned: 0, rows: [] },
        { error_code: "NO_MATCH_IN_1C" },
      ),
    ]);
    expect(none.coverage).toMatchObject({ outcome: "BLOCKED_BY_MISSING_DATA", reason_codes: ["NO_MATCH_IN_1C"] });
    expect(none.coverage.next_best_actions.join(" ")).toMatch(/01\.10\.2025/);
  });

  it("a timeout of the required tool blocks by tooling; of an optional one only limits depth", () => {
    const req = assess([
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      toolRun("S4", "get_open_supplier_settlements", "timeout", null, {
        error_code: "MCP_TIMEOUT",
        error_message: "Request timed out",
      }),
    ]);
    expect(req.coverage.outcome).toBe("BLOCKED_BY_TOOLING");
    expect(req.coverage.reason_codes).toEqual(["MCP_TIMEOUT"]);
    expect(req.bundle.execution_errors).toHaveLength(1);
    const opt = assess([
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      registerRun([settlementRow("cp-a", "ООО «А»", 1000)]),
      toolRun("S6", "get_payment_chain", "tool_error", null, {
        error_code: "TOOL_EXECUTION_ERROR",
        error_message: "сбой",
      }),
    ]);
    expect(opt.coverage.outcome).toBe("PARTIALLY_ANSWERED");
    expect(opt.coverage.reason_codes).toEqual(["EVIDENCE_DEPTH_LIMIT", "TOOL_EXECUTION_ERROR"]);
  });

  it("finds a conflict between the register and documents with payments, and names an unposted payment", () => {
    const { coverage, bundle } = assess([
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      registerRun([settlementRow("cp-v", "ООО «Вектор»", 60000)]),
      toolRun(
        "S5",
        "get_unclosed_documents_for_counterparty",
        "empty",
        {
          status: "empty",
          note: "",
          counterparty_id: "cp-v",
          as_of_date: "2026-03-31",
          documents_scanned: 1,
          rows: [],
        },
        { input: { counterparty_id: "cp-v" } },
      ),
      toolRun(
        "S6",
        "get_payment_chain",
        "success",
        {
          status: "ok",
          note: "",
          counterparty_id: "cp-v",
          rows: [
            {
              payment_id: "p1",
              number: "466",
              date: "2026-03-25",
              amount: 60000,
              posted: false,
              allocations: [{ document_id: "d1", document_number: "310", amount: 60000 }],
              source_ref: "Документ.СписаниеСРасчетногоСчета:p1",
            },
          ],
        },
        { input: { counterparty_id: "cp-v" } },
      ),
    ]);
    expect(bundle.conflicts).toHaveLength(1);
    expect(bundle.conflicts[0]!.description).toMatch(/466.*не проведена/);
    expect(coverage).toMatchObject({ outcome: "PARTIALLY_ANSWERED", reason_codes: ["CONFLICTING_EVIDENCE"] });
  });

  it("assumed premises make the answer partial and say so; a blocked turn still gets a report", () => {
    const s = scope({
      reasons: ["AMBIGUOUS_BUSINESS_TERM", "MISSING_AS_OF_DATE", "ASSUMPTION_APPLIED_EXPLICITLY"],
      premises: [
        {
          kind: "business_term",
          key: "хвосты",
          value: "open_settlement_balance",
          label: "Трактовка",
          status: "assumed",
          source: "default",
          since_turn: 1,
        },
      ],
    });
    const { coverage } = assess(
      [
        toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
        registerRun([settlementRow("cp-a", "ООО «А»", 1000)]),
      ],
      s,
    );
    expect(coverage.outcome).toBe("PARTIALLY_ANSWERED");
    expect(coverage.uncovered_points.join(" ")).toMatch(/не подтверждена/);
    const blocked = ruleCoverage({
      requestId: "r",
      frame: null,
      scope: scope({
        gate: "clarify",
        reasons: ["MULTIPLE_VALID_INTERPRETATIONS", "NEEDS_USER_CONFIRMATION"],
        clarifying_question: "Что считать хвостами?",
      }),
      plan: null,
      toolRuns: [],
      bundle: buildEvidence("r", plan([]), [], []),
    });
    expect(blocked.coverage.outcome).toBe("BLOCKED_BY_AMBIGUITY");
    expect(blocked.clarifying_question).toBe("Что считать хвостами?");
  });

  it("an unresolved or ambiguous counterparty fails binding or asks whom", () => {
    const P2 = plan([
      ["S1", "resolve_counterparty", true],
      ["S2", "resolve_period_or_asof", true],
      ["S3", "get_balance_as_of", true],
    ]);
    const s = scope({ intent: "counterparty_balance", reading: null, role: null });
    const run = (status: "no_match" | "ambiguous") => {
      const runs = [
        toolRun(
          "S1",
          "resolve_counterparty",
          status,
          {
            status,
            note: "",
            counterparty_id: null,
            candidates:
              status === "ambiguous"
                ? [
                    { counterparty_id: "a", name: "ООО «Альфа-Снаб»", inn: "1", roles: ["supplier"], score: 0.8 },
                    { counterparty_id: "b", name: "ООО «Альфа-Трейд»", inn: "2", roles: ["customer"], score: 0.8 },
                  ]
                : [],
          },
          {
            input: { query: "Альфа" },
            error_code: status === "no_match" ? "NO_MATCH_IN_1C" : "LOW_CONFIDENCE_ENTITY_BINDING",
          },
        ),
        toolRun("S3", "get_balance_as_of", "skipped", null),
      ];
      return ruleCoverage({
        requestId: "r",
        frame: null,
        scope: s,
        plan: P2,
        toolRuns: runs,
        bundle: buildEvidence("r", P2, runs, []),
      });
    };
    expect(run("no_match").coverage).toMatchObject({
      outcome: "FAILED_TO_BIND_ENTITIES",
      reason_codes: ["ENTITY_NOT_RESOLVED", "NO_MATCH_IN_1C"],
    });
    const amb = run("ambiguous");
    expect(amb.coverage).toMatchObject({
      outcome: "BLOCKED_BY_AMBIGUITY",
      reason_codes: ["LOW_CONFIDENCE_ENTITY_BINDING", "NEEDS_USER_CONFIRMATION"],
    });
    expect(amb.clarifying_question).toMatch(/Альфа-Снаб.*или.*Альфа-Трейд/);
  });

  it("the model critic can only add depth gaps: it lowers full to partial, never raises, and cannot invent a conflict", () => {
    const runs = [
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      registerRun([settlementRow("cp-a", "ООО «А»", 1000)]),
    ];
    const { coverage, bundle } = assess(runs);
    const merged = mergeUsed(
      coverage,
      {
        gaps: [{ kind: "documents_not_checked", ref: ref({ fact_id: "F2" }) }],
        actions: [],
        // the old free-text shape: a conflict the critic invented, never taken
        extra_reasons: [{ reason_code: "CONFLICTING_EVIDENCE", message: "выдумано" }],
      },
      critiqueGround(bundle, P, runs),
    );
    expect(merged.outcome).toBe("PARTIALLY_ANSWERED");
    expect(merged.reason_codes).toEqual(["INSUFFICIENT_DOCUMENT_DEPTH"]);
    expect(merged.uncovered_points).toEqual(["Документы, образующие остаток, по ООО «А» не проверены"]);
    expect(merged.critic.note).toMatch(/свободный текст критика не показывается/);
    expect(JSON.stringify(merged)).not.toMatch(/выдумано/);
    const blocked = { ...coverage, outcome: "BLOCKED_BY_TOOLING" as const, answerability: "insufficient" as const };
    expect(
      mergeUsed(
        blocked,
        {
          gaps: [{ kind: "partial_match", ref: ref({ fact_id: "F2" }) }],
          actions: [],
          covered_points: ["всё покрыто"],
        },
        critiqueGround(bundle, P, runs),
      ).outcome,
    ).toBe("BLOCKED_BY_TOOLING");
  });
});

const ref = (r: Partial<CriticRef>): CriticRef => ({ fact_id: null, step_id: null, tool: null, scope: null, ...r });

describe("the model critic proposes from a closed set, bound to this run (§6.2.7)", () => {
  const clean = [
    toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
    registerRun([settlementRow("cp-a", "ООО «А»", 1000)]),
  ];

  it("drops points bound to nothing of this run, and says so by kind — never in the model's words", () => {
    const { coverage, bundle } = assess(clean);
    const g = critiqueGround(bundle, P, clean);
    const merged = mergeUsed(
      coverage,
      {
        gaps: [
          { kind: "documents_not_checked", ref: ref({ fact_id: "F9" }) }, // no such fact
          { kind: "step_incomplete", ref: ref({ step_id: "S99" }) }, // no such step
          { kind: "payments_not_reconciled", ref: ref({ tool: "get_payment_chain" }) }, // that tool did not fail
          { kind: "partial_match", ref: ref({}) }, // bound to nothing
          { kind: "documents_not_checked", ref: ref({ fact_id: "F2", step_id: "S4" }) }, // two things at once
          { kind: "documents_not_checked", ref: ref({ fact_id: "F2" }) },
        ],
        actions: [
          { kind: "retry_step", ref: ref({ fact_id: "F2" }) }, // a retry is of a step, not of a fact
          { kind: "request_documents", ref: ref({ step_id: "S7" }) }, // documents are requested from a party
          { kind: "check_posting", ref: ref({ fact_id: "F2" }) },
        ],
        next_best_actions: ["оплатить повторно 1 000,00 ₽"],
        uncovered_points: ["оспорено поставщиком, сумма к оплате 500 ₽"],
      },
      g,
    );
    expect(merged.uncovered_points).toEqual(["Документы, образующие остаток, по ООО «А» не проверены"]);
    expect(merged.next_best_actions).toContain("Проверить проведение документов по ООО «А»");
    expect(merged.next_best_actions.join()).not.toMatch(/оплатить повторно|S7/);
    expect(JSON.stringify(merged)).not.toMatch(/оплатить повторно|оспорено|500/);
    expect(merged.critic.note).toMatch(/documents_not_checked \(F9\).*step_incomplete \(S99\).*partial_match/);
  });

  it("a document to request for the run's scope is a depth gap: the party and the period bind it", () => {
    const runs = [partyRun("cp-a", "ООО «А»", "7700000000", "А"), ...clean];
    const { coverage, bundle } = assess(runs);
    expect(coverage.outcome).toBe("FULLY_ANSWERED");
    const g = critiqueGround(bundle, P, runs);
    const merged = mergeUsed(
      coverage,
      {
        gaps: [{ kind: "document_to_request", ref: ref({ scope: "party" }) }],
        actions: [{ kind: "request_documents", ref: ref({ scope: "period" }) }],
      },
      g,
    );
    expect(merged.outcome).toBe("PARTIALLY_ANSWERED");
    expect(merged.reason_codes).toContain("INSUFFICIENT_DOCUMENT_DEPTH");
    expect(merged.uncovered_points).toContain(
      "Подтверждающие документы по ООО «А» за период до 31.03.2026 в учёте не получены — их нужно запросить",
    );
    expect(merged.next_best_actions).toContain("Запросить подтверждающие документы за период до 31.03.2026");
    // a run without a bound party has no party scope to bind to
    const general = assess(clean);
    const g2 = critiqueGround(general.bundle, P, clean);
    expect(
      mergeUsed(
        general.coverage,
        { gaps: [{ kind: "document_to_request", ref: ref({ scope: "party" }) }], actions: [] },
        g2,
      ).outcome,
    ).toBe("FULLY_ANSWERED");
  });

  it("a failed tool run is ground for a point about it", () => {
    const runs = [
      ...clean,
      toolRun("S6", "get_payment_chain", "tool_error", null, {
        error_code: "TOOL_EXECUTION_ERROR",
        error_message: "x",
      }),
    ];
    const { coverage, bundle } = assess(runs);
    const merged = mergeUsed(
      coverage,
      {
        gaps: [{ kind: "step_incomplete", ref: ref({ tool: "get_payment_chain" }) }],
        actions: [{ kind: "retry_step", ref: ref({ tool: "get_payment_chain" }) }],
      },
      critiqueGround(bundle, P, runs),
    );
    expect(merged.uncovered_points).toContain("Проверка «шаг S6» выполнена не полностью");
    expect(merged.next_best_actions).toContain("Повторить проверку «шаг S6» позже");
  });
});

/** The engine's own answer (no model) to plan P over these tool runs, with the bundle and coverage it rests on. */
function offlineAnswer(runs: Parameters<typeof buildEvidence>[2]) {
  const bundle = buildEvidence("r1", P, runs, []);
  const { coverage } = ruleCoverage({ requestId: "r1", frame: null, scope: scope(), plan: P, toolRuns: runs, bundle });
  const pkg = composeAnswer({
    scope: scope(),
    coverage,
    bundle,
    toolRuns: runs,
    clarifying_question: null,
    offline: true,
  });
  return { bundle, coverage, pkg };
}

describe("answer composition and validation", () => {
  const runs = [
    toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
    registerRun([settlementRow("cp-a", "ООО «А»", 95000), settlementRow("cp-s", "ИП Смирнов", -30000)]),
  ];
  const { bundle, coverage, pkg } = offlineAnswer(runs);
  const validateAnswer = (text: string) =>
    checkAnswer(text, createClaimChecker({ bundle, coverage, outcome: coverage.outcome, frame: null, draft: pkg }));

  it("has the five blocks, binds every evidence claim to fact ids and keeps advances apart from debts", () => {
    expect(FinalAnswerPackage.parse(pkg)).toBeTruthy();
    expect(pkg.user_facing_answer).toMatch(
      /\*\*Коротко\.\*\*[\s\S]*\*\*Что проверено\.\*\*[\s\S]*\*\*Что найдено\.\*\*[\s\S]*\*\*Что не удалось установить\.\*\*[\s\S]*\*\*Что уточнить \/ следующий шаг\.\*\*/,
    );
    for (const c of pkg.claims)
      if (c.kind === "evidence")
        expect(c.evidence_ids.every((id) => bundle.facts.some((f) => f.fact_id === id))).toBe(true);
    expect(pkg.short_answer).toMatch(
      /долг перед поставщиками \(1\): ООО «А» — 95 000,00 ₽.*аванс.*ИП Смирнов — 30 000,00 ₽/,
    );
    // the composed answer is the contract's own: its slots render to exactly its text
    const own = validateAnswer(draftTemplate(pkg, HEADINGS));
    expect(own.ok).toBe(true);
    expect(own.rendered).toBe(pkg.user_facing_answer);
    // the same text written out as prose is outside the closed world
    expect(validateAnswer(pkg.user_facing_answer).ok).toBe(false);
  });

  it("rejects model text that names a missing fact, drops a block or invents an amount", () => {
    const good = draftTemplate(pkg, HEADINGS);
    expect(validateAnswer(`${good}\n- {F99.amount}`).issues).toContain(
      "{F99.amount}: факта F99 нет в данных этой проверки",
    );
    expect(validateAnswer(good.replace("**Что найдено.**", "**Итого.**")).issues.join()).toMatch(/Что найдено/);
    expect(validateAnswer(`${good}\nЕщё долг 777 777,00 ₽.`).issues.join()).toMatch(/цифры вне слота/);
  });
});

describe("a model plan shallower than the built-in plan (§7.5, §8.6)", () => {
  const floor = planFor(scope(), "r1");
  const llmPlan = { ...floor, planned_by: "llm" as const };
  const settlements = registerRun([settlementRow("cp-a", "ООО «А»", 1000), settlementRow("cp-b", "ООО «Б»", 2000)]);
  const docs = (cp: string) =>
    toolRun(
      "S5",
      "get_unclosed_documents_for_counterparty",
      "success",
      { status: "empty", note: "", counterparty_id: cp, as_of_date: "2026-03-31", documents_scanned: 1, rows: [] },
      { input: { counterparty_id: cp, as_of_date: "2026-03-31" } },
    );
  const chain = (cp: string) =>
    toolRun(
      "S6",
      "get_payment_chain",
      "success",
      { status: "empty", note: "", counterparty_id: cp, rows: [] },
      { input: { counterparty_id: cp, as_of_date: "2026-03-31" } },
    );
  const judge = (runs: ReturnType<typeof toolRun>[], p: ExecutionPlan = llmPlan) => {
    const bundle = buildEvidence("r1", p, runs, []);
    return ruleCoverage({ requestId: "r1", frame: null, scope: scope(), plan: p, toolRuns: runs, bundle }).coverage;
  };
  const date = toolRun("S2", "resolve_period_or_asof", "success", dateOut());

  it("a per-row check run for fewer rows than the built-in plan needs is EVIDENCE_DEPTH_LIMIT, never FULLY_ANSWERED", () => {
    const shallow = judge([date, settlements, docs("cp-a"), chain("cp-a"), chain("cp-b")]);
    expect(shallow.reason_codes).toContain("EVIDENCE_DEPTH_LIMIT");
    expect(shallow.outcome).not.toBe("FULLY_ANSWERED");
    expect(shallow.why_partial.map((w) => w.message).join()).toMatch(/не выполнена для 1 из 2 случаев/);
  });

  it("the same depth as the built-in plan, or the built-in plan itself, is not", () => {
    const full = [date, settlements, docs("cp-a"), docs("cp-b"), chain("cp-a"), chain("cp-b")];
    expect(judge(full).reason_codes).not.toContain("EVIDENCE_DEPTH_LIMIT");
    expect(judge([date, settlements, docs("cp-a")], floor).reason_codes).not.toContain("EVIDENCE_DEPTH_LIMIT");
  });
});

describe("an advance is an open balance in our favour", () => {
  it("with advances only, the short answer says there is no debt of ours, never «не найдено»", () => {
    const runs = [
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      registerRun([settlementRow("cp-s", "ИП Смирнов", -30000)]),
    ];
    const { pkg } = offlineAnswer(runs);
    expect(pkg.short_answer).not.toMatch(/не найдено/);
    expect(pkg.short_answer).toMatch(
      /нашего долга перед поставщиками нет; открыты выданные авансы: ИП Смирнов — 30 000,00 ₽/,
    );
  });
});
