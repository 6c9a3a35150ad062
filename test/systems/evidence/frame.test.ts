// Issue 13, items 4–8, against the real server: premises only from the user's words, plan
// coverage, the six §12.3 situations, follow-up context, honest failures and readable offline
// answers. The model is the scripted OpenAI-compatible server; tools are the demo MCP server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evidenceMcpHttpHandler } from "../../../systems/evidence/mcp-server/server";
import { closeEvidenceMcp, useEvidenceMcp } from "../../../systems/evidence/routes";
import { useFetchServers, useTestServer } from "../../utils/server";
import { eventsNamed, postSse } from "../../utils/sse";
import { interpreterReply, NO_CRITIC_POINTS, planStep } from "../../utils/evidence-api";
import { ownMcp, plannedBy } from "../../utils/systems-evidence";
import { openConversation } from "../../utils/systems-conversations";

const A = { authorization: "Bearer tok-a" };
const serveFetch = useFetchServers();

async function serveMcp(faults: Parameters<typeof evidenceMcpHttpHandler>[1]): Promise<string> {
  return `${await serveFetch(evidenceMcpHttpHandler(online.db.sql, faults))}/mcp`;
}

const online = useTestServer({ llm: true, tokens: "a:tok-a" });
const offline = useTestServer({ over: online, tokens: "a:tok-a" });
const llm = online.llm;
beforeAll(async () => {
  await useEvidenceMcp(online.deps, ownMcp(online.url, A));
  await useEvidenceMcp(offline.deps, ownMcp(online.url, A));
}, 120_000);
afterAll(async () => {
  await closeEvidenceMcp(online.deps).catch(() => {});
  await closeEvidenceMcp(offline.deps).catch(() => {});
});

type Premise = { kind: string; key: string; status: string; source: string; value: string };
type Final = {
  outcome: string;
  reasonCodes: string[];
  answer: string;
  runId: string;
  package: { blocks: { found: string[]; not_established: string[]; checked: string[] } };
  premises: Premise[];
};

const DETECT = "detect_open_supplier_settlements";
const interp = (o: { intent: string; counterparty?: string; date?: string; reading?: string; group?: boolean }) =>
  interpreterReply({ question: "вопрос", shape: "list_with_explanation", ...o });

const conversation = (base: string) => openConversation(base, "evidence", A);

async function ask(base: string, id: string, text: string, script: { planner?: string[]; answer?: string } = {}) {
  if (base === online.url) {
    llm.reset();
    if (script.planner) llm.script("planner", ...script.planner);
    if (script.answer) llm.script("answer", script.answer);
  }
  const r = await postSse(`${base}/v1/evidence/conversations/${id}/messages`, { text }, A);
  expect(eventsNamed(r, "error")).toEqual([]);
  return eventsNamed(r, "final")[0] as unknown as Final;
}
const artifacts = async (runId: string) =>
  (
    (await (await fetch(`${online.url}/v1/evidence/runs/${runId}`, { headers: A })).json()) as {
      artifacts: Record<string, any>;
    }
  ).artifacts;
const premise = (f: Final, key: string) => f.premises.find((p) => p.key === key || p.kind === key);

describe("premises come from the user's words only (§11.3)", () => {
  it("a reading of «хвосты» the user never gave stays assumed and AMBIGUOUS_BUSINESS_TERM stays", async () => {
    const id = await conversation(online.url);
    const f = await ask(online.url, id, "По каким поставщикам висят хвосты на 31.03.2026?", {
      planner: plannedBy(
        interp({ intent: DETECT, date: "31.03.2026", reading: "overdue_settlements" }),
        NO_CRITIC_POINTS,
      ),
    });
    expect(premise(f, "business_term")).toMatchObject({
      status: "assumed",
      source: "interpreter",
      value: "overdue_settlements",
    });
    expect(f.reasonCodes).toContain("AMBIGUOUS_BUSINESS_TERM");
    expect(f.outcome).not.toBe("FULLY_ANSWERED");
    // the date was the user's: confirmed
    expect(premise(f, "time_scope")).toMatchObject({ status: "confirmed", source: "user" });
  });

  it("a reading the user did give is confirmed, whatever the model says about it", async () => {
    const id = await conversation(online.url);
    const f = await ask(online.url, id, "Какие просроченные хвосты по поставщикам на 31.03.2026?", {
      planner: plannedBy(interp({ intent: DETECT, date: "31.03.2026" }), NO_CRITIC_POINTS),
    });
    expect(premise(f, "business_term")).toMatchObject({
      status: "confirmed",
      source: "user",
      value: "overdue_settlements",
    });
  });

  it("an invented date and an invented counterparty are assumptions, never confirmed", async () => {
    const id = await conversation(online.url);
    const f = await ask(online.url, id, "Какое сальдо по Альфа-Снабу?", {
      planner: plannedBy(
        interp({ intent: "counterparty_balance", counterparty: "Альфа-Снаб", date: "31.03.2026" }),
        NO_CRITIC_POINTS,
      ),
    });
    expect(premise(f, "counterparty")).toMatchObject({ status: "confirmed" }); // «Альфа-Снабу» carries «Альфа-Снаб» by stem
    expect(premise(f, "time_scope")).toMatchObject({ status: "assumed", source: "interpreter" });
    expect(f.reasonCodes).toEqual(expect.arrayContaining(["MISSING_AS_OF_DATE", "ASSUMPTION_APPLIED_EXPLICITLY"]));
    expect(f.outcome).toBe("PARTIALLY_ANSWERED");

    const id2 = await conversation(online.url);
    const g = await ask(online.url, id2, "Какое сальдо на 31 марта?", {
      planner: plannedBy(
        interp({ intent: "counterparty_balance", counterparty: "ООО «Вектор»", date: "2026-03-31" }),
        NO_CRITIC_POINTS,
      ),
    });
    expect(premise(g, "counterparty")).toMatchObject({ status: "assumed", source: "interpreter" });
    // the user's own date words are what is resolved, and they confirm the date
    expect(premise(g, "time_scope")).toMatchObject({ status: "confirmed", value: "31 марта" });
    expect(g.outcome).toBe("PARTIALLY_ANSWERED");
    expect(g.answer).toMatch(/Вектор»+ в вопросе не назван/);
  });

  it("the system's own assumption echoed back next turn is not a confirmation", async () => {
    const id = await conversation(online.url);
    const t1 = await ask(online.url, id, "Какое сальдо по ООО «Альфа-Снаб»?", {
      planner: plannedBy(interp({ intent: "counterparty_balance", counterparty: "Альфа-Снаб" }), NO_CRITIC_POINTS),
    });
    expect(premise(t1, "time_scope")).toMatchObject({ status: "assumed" });
    const t2 = await ask(online.url, id, "А какие документы по нему не закрыты?", {
      planner: plannedBy(
        interp({ intent: "unclosed_documents", counterparty: "ООО «Альфа-Снаб»", date: "2026-04-10" }),
        NO_CRITIC_POINTS,
      ),
    });
    expect(premise(t2, "time_scope")!.status).toBe("assumed");
    expect(premise(t2, "counterparty")).toMatchObject({ status: "inherited", source: "previous_turn" });
    expect(t2.outcome).not.toBe("FULLY_ANSWERED");
    expect(t2.reasonCodes).toContain("MISSING_AS_OF_DATE");
  });
});

describe("a model plan covers the built-in plan's checks", () => {
  it("a register-only model plan is extended: the unposted-payment conflict is still found", async () => {
    const id = await conversation(online.url);
    const registerOnly = JSON.stringify({
      goal: "остатки",
      steps: [
        planStep("S1", "resolve_period_or_asof", {}, { type: "date", purpose: "дата" }),
        planStep(
          "S2",
          "get_open_supplier_settlements",
          { as_of_date: "$S1.as_of_date" },
          { type: "register", depends_on: ["S1"], purpose: "остатки" },
        ),
      ],
    });
    const f = await ask(online.url, id, "По каким поставщикам незакрытые остатки на 31.03.2026?", {
      planner: [interp({ intent: DETECT, date: "31.03.2026" }), registerOnly, NO_CRITIC_POINTS],
    });
    expect(f.outcome).toBe("PARTIALLY_ANSWERED");
    expect(f.reasonCodes).toContain("CONFLICTING_EVIDENCE");
    expect(f.answer).not.toMatch(/Пробелов не обнаружено/);
    expect(f.answer).toMatch(/не проведена/);
    const a = await artifacts(f.runId);
    expect(a.execution_plan.planned_by).toBe("llm");
    expect(a.execution_plan.steps.map((s: { tool: string }) => s.tool)).toEqual(
      expect.arrayContaining([
        "get_unclosed_documents_for_counterparty",
        "get_payment_chain",
        "get_related_closing_documents",
      ]),
    );
    expect(a.rejected_model_outputs.find((r: { stage: string }) => r.stage === "plan").issues.join(" ")).toMatch(
      /не покрывает критерии успеха.*get_payment_chain/,
    );
  });
});

describe("the six situations of §12.3 stay distinct (offline interpreter)", () => {
  const cases: [string, string, string, RegExp][] = [
    [
      "Какие хвосты по поставщикам на 31.02.2026?",
      "BLOCKED_BY_AMBIGUITY",
      "INVALID_DATE",
      /Даты «31\.02\.2026» нет в календаре/,
    ],
    [
      "Какие хвосты по поставщикам на 15.05.2026?",
      "BLOCKED_BY_AMBIGUITY",
      "FUTURE_DATE",
      /15\.05\.2026» позже рабочей даты базы 10\.04\.2026/,
    ],
    [
      "Какой у нас долг перед ООО «Ромашка»?",
      "FAILED_TO_BIND_ENTITIES",
      "ENTITY_ROLE_MISMATCH",
      /ООО «Ромашка» числится в учёте как покупатель, но не как поставщик/,
    ],
    [
      "Сколько нам должна ООО «Ромашка»?",
      "BLOCKED_BY_MISSING_DATA",
      "ROUTE_DOES_NOT_COVER_ROLE",
      /только расчёты с поставщиками/,
    ],
    ["Какие хвосты по поставщикам на 01.01.2025?", "BLOCKED_BY_MISSING_DATA", "NO_MATCH_IN_1C", /нет записей/],
  ];
  for (const [text, outcome, code, says] of cases) {
    it(`${text} → ${outcome} / ${code}`, async () => {
      const f = await ask(offline.url, await conversation(offline.url), text);
      expect(f.outcome).toBe(outcome);
      expect(f.reasonCodes).toContain(code);
      expect(f.answer).toMatch(says);
      if (code !== "NO_MATCH_IN_1C") {
        expect(f.reasonCodes).not.toContain("NO_MATCH_IN_1C");
        expect(f.answer).not.toMatch(/нет записей/);
      }
      expect(f.answer).not.toMatch(/\d{1,3} \d{3},\d{2} ₽/); // nothing fact-like about balances
    });
  }

  it("variants: an impossible date in words, a customer asked through the supplier register by balance and by role", async () => {
    const a = await ask(offline.url, await conversation(offline.url), "Хвосты по поставщикам на 30 февраля?");
    expect(a.reasonCodes).toContain("INVALID_DATE");
    const b = await ask(
      offline.url,
      await conversation(offline.url),
      "Какое сальдо по ООО «Альфа-Трейд» на 31.03.2026?",
    );
    expect(b).toMatchObject({ outcome: "BLOCKED_BY_MISSING_DATA" });
    expect(b.reasonCodes).toContain("ROUTE_DOES_NOT_COVER_ROLE");
    const c = await ask(offline.url, await conversation(offline.url), "Сколько нам должен ООО «Вектор» на 31.03.2026?");
    expect(c.reasonCodes).toContain("ROUTE_DOES_NOT_COVER_ROLE");
    expect(c.answer).not.toMatch(/\d{1,3} \d{3},\d{2} ₽/); // Вектор's supplier balance is not passed off as its debt to us
    const e = await ask(offline.url, await conversation(offline.url), "Сколько мы должны Ромашке?");
    expect(e).toMatchObject({ outcome: "FAILED_TO_BIND_ENTITIES" });
    expect(e.reasonCodes).toContain("ENTITY_ROLE_MISMATCH");
    expect(e.answer).toMatch(/поставщиком не числится/);
    const d = await ask(offline.url, await conversation(offline.url), "Есть ли хвосты по поставщику Ромашка?");
    expect(d).toMatchObject({ outcome: "FAILED_TO_BIND_ENTITIES" });
    expect(d.reasonCodes).toContain("ENTITY_ROLE_MISMATCH");
  });

  it("the role is read from the user's words even when the model picks the supplier intent", async () => {
    const a = await ask(online.url, await conversation(online.url), "Сколько нам должна Ромашка на 31.03.2026?", {
      planner: [interp({ intent: DETECT, counterparty: "Ромашка", date: "31.03.2026" }), NO_CRITIC_POINTS],
    });
    expect(a.outcome).toBe("BLOCKED_BY_MISSING_DATA");
    expect(a.reasonCodes).toContain("ROUTE_DOES_NOT_COVER_ROLE");
    expect(a.reasonCodes).not.toContain("NO_MATCH_IN_1C");
    // advances to suppliers («поставщики нам должны») are in the supplier register: answered
    const b = await ask(
      online.url,
      await conversation(online.url),
      "Какие поставщики нам должны на 31.03.2026? Любые незакрытые остатки",
      { planner: plannedBy(interp({ intent: DETECT, date: "31.03.2026" }), NO_CRITIC_POINTS) },
    );
    expect(b.reasonCodes).not.toContain("ROUTE_DOES_NOT_COVER_ROLE");
    expect(b.answer).toMatch(/Смирнов/);
  });

  it("«на вчера» is resolved against the working date and marked as such", async () => {
    const f = await ask(
      offline.url,
      await conversation(offline.url),
      "Какие хвосты по поставщикам на вчера? Любые незакрытые остатки",
    );
    expect(f.reasonCodes).toContain("RELATIVE_DATE_RESOLVED");
    expect(f.answer).toMatch(/09\.04\.2026/);
    expect(f.answer).toMatch(/09\.04\.2026 \(«вчера», отсчитано от рабочей даты базы 10\.04\.2026\)/);
    expect(premise(f, "time_scope")).toMatchObject({ status: "confirmed", value: "вчера" });
  });
});

describe("context follows the conversation", () => {
  it("«а на 10.04.2026?» after «а по Альфа-Снабу?» keeps the supplier and the new date together", async () => {
    const id = await conversation(offline.url);
    await ask(offline.url, id, "По каким поставщикам незакрытые остатки на 31.03.2026?");
    const t2 = await ask(offline.url, id, "а по Альфа-Снабу?");
    expect(premise(t2, "counterparty")).toMatchObject({ status: "confirmed", value: "Альфа-Снабу" });
    expect(premise(t2, "time_scope")).toMatchObject({ status: "inherited" });
    expect(t2.answer).toMatch(/31\.03\.2026/);
    const t3 = await ask(offline.url, id, "а на 10.04.2026?");
    expect(premise(t3, "counterparty")).toMatchObject({ status: "inherited", value: "ООО «Альфа-Снаб»" });
    expect(premise(t3, "time_scope")).toMatchObject({ status: "confirmed", value: "10.04.2026" });
    expect(t3.answer).toMatch(/Альфа-Снаб/);
    expect(t3.answer).not.toMatch(/ТехноПоставка/);
    // a new question about suppliers in general starts without the counterparty
    const t4 = await ask(offline.url, id, "А по каким поставщикам висят хвосты на 31.03.2026?");
    expect(premise(t4, "counterparty")).toBeUndefined();
  });

  it("the offline interpreter reads «по поставщику …» and «вчера»", async () => {
    const f = await ask(
      offline.url,
      await conversation(offline.url),
      "Какие хвосты по поставщику Альфа-Снаб на вчера?",
    );
    expect(premise(f, "counterparty")).toMatchObject({ status: "confirmed", value: "Альфа-Снаб" });
    expect(premise(f, "time_scope")).toMatchObject({ value: "вчера" });
    expect(f.answer).toMatch(/09\.04\.2026/);
    expect(f.answer).toMatch(/Альфа-Снаб/);
  });
});

describe("honest failures", () => {
  it("a connected model that answered garbage twice is a broken model, and the rules' QueryFrame is stored", async () => {
    const id = await conversation(online.url);
    const f = await ask(online.url, id, "Ну и что там у нас вообще творится?", {
      planner: ["это не JSON", "и это тоже не JSON"],
    });
    expect(f.outcome).toBe("BLOCKED_BY_TOOLING");
    expect(f.reasonCodes).toContain("MODEL_OUTPUT_INVALID");
    expect(f.reasonCodes).not.toContain("MODEL_REQUIRED");
    expect(f.answer).not.toMatch(/не подключена/);
    expect(f.answer).toMatch(/подключена, но дважды ответила не по схеме/);
    const a = await artifacts(f.runId);
    expect(a.query_frame).toMatchObject({
      original_user_question: "Ну и что там у нас вообще творится?",
      interpreted_by: "deterministic",
    });
    expect(a.rejected_model_outputs[0]).toMatchObject({ stage: "interpretation" });
    expect(a.rejected_model_outputs[0].issues.join(" ")).toMatch(/это не JSON/);
  });

  it("garbage twice on a question the rules can read: answered by the rules, and the answer says so", async () => {
    const f = await ask(
      online.url,
      await conversation(online.url),
      "По каким поставщикам незакрытые остатки на 31.03.2026?",
      { planner: ["не JSON", "опять не JSON", "{}", "{}", NO_CRITIC_POINTS] },
    );
    expect(f.outcome).toBe("PARTIALLY_ANSWERED");
    expect(f.answer).toMatch(/разобран правилами: языковая модель подключена, но не дала ответа по схеме/);
    const a = await artifacts(f.runId);
    expect(a.query_frame).toMatchObject({
      interpreted_by: "deterministic",
      original_user_question: "По каким поставщикам незакрытые остатки на 31.03.2026?",
    });
    expect(a.rejected_model_outputs.map((r: { stage: string }) => r.stage)).toEqual(["interpretation", "plan"]);
  });

  it("the debug view and the stage timings are stored with the run; the answer stage is timed", async () => {
    const id = await conversation(online.url);
    const f = await ask(online.url, id, "По каким поставщикам незакрытые остатки на 31.03.2026?", {
      planner: plannedBy(interp({ intent: DETECT, date: "31.03.2026" }), NO_CRITIC_POINTS),
      answer: "Коротко: проверка выполнена.",
    });
    const a = await artifacts(f.runId);
    expect(a.debug_view).toBeTruthy();
    expect(JSON.stringify(a.debug_view)).toMatch(/31/);
    const answer = a.stages.find((s: { name: string }) => s.name === "answer");
    expect(answer.durationMs).toBeGreaterThan(0);
  });

  it("an MCP server without the contract's tools is not ready, and says which are missing", async () => {
    const url = await serveMcp({
      get_payment_chain: { absent: true },
      get_related_closing_documents: { absent: true },
    });
    await useEvidenceMcp(offline.deps, { endpoint: { kind: "http", url } });
    try {
      const r = (await (await fetch(`${offline.url}/v1/evidence/tools`, { headers: A })).json()) as {
        ready: boolean;
        missing: string[];
        tools: string[];
      };
      expect(r.ready).toBe(false);
      expect(r.missing).toEqual(["get_payment_chain", "get_related_closing_documents"]);
      expect(r.tools).toContain("get_balance_as_of");
    } finally {
      await useEvidenceMcp(offline.deps, {
        endpoint: { kind: "http", url: `${online.url}/v1/evidence/mcp`, headers: A },
      });
    }
    const ok = (await (await fetch(`${offline.url}/v1/evidence/tools`, { headers: A })).json()) as {
      ready: boolean;
      missing: string[];
    };
    expect(ok).toMatchObject({ ready: true, missing: [] });
  });
});

describe("offline answers read as a person would write them", () => {
  it("a tool error: a human sentence, no raw error text, no duplicated lines", async () => {
    const url = await serveMcp({ get_open_supplier_settlements: { error: "ECONNRESET upstream socket hang up" } });
    await useEvidenceMcp(offline.deps, { endpoint: { kind: "http", url } });
    try {
      const f = await ask(
        offline.url,
        await conversation(offline.url),
        "По каким поставщикам висят хвосты на 31.03.2026?",
      );
      expect(f.outcome).toBe("BLOCKED_BY_TOOLING");
      expect(f.answer).not.toMatch(/ECONNRESET|socket|MCP error|Error:/);
      expect(f.answer).toMatch(/инструмент завершился ошибкой|не ответил/);
      const lines = f.answer.split("\n").filter((l) => l.startsWith("- "));
      expect(new Set(lines).size).toBe(lines.length);
      expect(
        lines.filter((l) => /выполнение маршрута прервано|Не выполнены из-за сбоя/.test(l)).length,
      ).toBeLessThanOrEqual(1);
      // the raw error stays in the run's tool runs
      const a = await artifacts(f.runId);
      expect(JSON.stringify(a.tool_runs)).toMatch(/ECONNRESET/);
    } finally {
      await useEvidenceMcp(offline.deps, {
        endpoint: { kind: "http", url: `${online.url}/v1/evidence/mcp`, headers: A },
      });
    }
  });

  it("MISROUTED has no empty evidence blocks", async () => {
    const f = await ask(online.url, await conversation(online.url), "Какая завтра погода в Москве?", {
      planner: [interp({ intent: "unsupported" }), NO_CRITIC_POINTS],
    });
    expect(f.outcome).toBe("MISROUTED");
    expect(f.answer).not.toMatch(/Что найдено|Что проверено|Фактов по вопросу не получено|Пробелов не обнаружено/);
    expect(f.answer).toMatch(/Что уточнить/);
  });
});
