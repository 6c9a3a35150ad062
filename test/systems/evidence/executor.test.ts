import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptyConversationState } from "../../../systems/evidence/artifacts";
import { executePlan } from "../../../systems/evidence/executor";
import { buildFrame, resolveScope } from "../../../systems/evidence/frame-resolve";
import { interpretDeterministic } from "../../../systems/evidence/interpret-rules";
import { McpConnection } from "../../../systems/evidence/mcp-client";
import { seedDemoData } from "../../../systems/evidence/mcp-server/demo-data";
import {
  createEvidenceMcpServer,
  evidenceMcpHttpHandler,
  parseFaults,
  type Faults,
} from "../../../systems/evidence/mcp-server/server";
import { planFor } from "../../../systems/evidence/plan-rules";
import { classifyCall } from "../../../systems/evidence/tool-outcome";
import { TOOL_NAMES } from "../../../systems/evidence/tool-contracts";
import { useTestDatabase } from "../../utils/db";
import { useFetchServers } from "../../utils/server";

const t = useTestDatabase();
const conns: McpConnection[] = [];
const serveFetch = useFetchServers();
const inProcess = (faults: Faults = {}) => {
  const c = new McpConnection({ kind: "in-process", create: () => createEvidenceMcpServer(t.db.sql, faults) });
  conns.push(c);
  return c;
};
const httpServer = async (faults: Faults = {}): Promise<string> =>
  `${await serveFetch(evidenceMcpHttpHandler(t.db.sql, faults))}/mcp`;

beforeAll(async () => {
  await seedDemoData(t.db.sql);
  await seedDemoData(t.db.sql); // idempotent
});
afterAll(async () => {
  for (const c of conns) await c.close();
});

function planOf(text: string) {
  const state = emptyConversationState("c");
  const frame = buildFrame(
    interpretDeterministic(text, state)!,
    { requestId: "r", conversationId: "c", turn: 1, text, interpretedBy: "deterministic" },
    state,
  );
  return planFor(resolveScope(frame, state), "r");
}

describe("demo MCP server through the SDK client", () => {
  it("offers the eight domain tools of §12.1, each with input and output schema", async () => {
    const c = inProcess();
    expect((await c.tools()).sort()).toEqual([...TOOL_NAMES].sort());
  });

  it("walks the seed's question: balances, documents, payments, supporting documents — one ToolRun per call", async () => {
    const { toolRuns } = await executePlan(planOf("По каким поставщикам висят хвосты?"), inProcess(), {
      timeoutMs: 10_000,
    });
    const s4 = toolRuns.find((r) => r.step_id === "S4")!;
    expect(s4.status).toBe("success");
    expect(
      (s4.output as { rows: { counterparty_name: string; balance: number }[] }).rows.map((r) => [
        r.counterparty_name,
        r.balance,
      ]),
    ).toEqual([
      ["АО «ТехноПоставка»", 150000],
      ["ООО «Альфа-Снаб»", 95000],
      ["ООО «Вектор»", 60000],
      ["ИП Смирнов Андрей Викторович", -30000],
    ]);
    // for_each with a filter: documents only for positive balances, each counterparty once
    expect(toolRuns.filter((r) => r.step_id === "S5").map((r) => r.input.counterparty_id)).toEqual([
      "cp-technopostavka",
      "cp-alfa-snab",
      "cp-vektor",
    ]);
    expect(toolRuns.find((r) => r.step_id === "S5" && r.input.counterparty_id === "cp-vektor")!.status).toBe("empty");
    const closing = toolRuns.find((r) => r.step_id === "S7" && r.input.document_id === "doc-tp-55")!;
    expect((closing.output as { missing_kinds: string[] }).missing_kinds).toEqual(["Счёт-фактура полученный"]);
    for (const r of toolRuns)
      expect(r).toMatchObject({
        tool_run_id: expect.any(String),
        duration_ms: expect.any(Number),
        started_at: expect.any(String),
      });
  });

  it("keeps empty, no match, unbound entity and ambiguous apart", async () => {
    const c = inProcess();
    const call = async (name: (typeof TOOL_NAMES)[number], args: Record<string, unknown>) =>
      classifyCall(name, await c.call(name, args, { timeoutMs: 5000 }));
    expect(await call("get_open_supplier_settlements", { as_of_date: "2026-02-28" })).toMatchObject({
      status: "empty",
      error_code: null,
    });
    expect(await call("get_open_supplier_settlements", { as_of_date: "2020-01-01" })).toMatchObject({
      status: "no_match",
      error_code: "NO_MATCH_IN_1C",
    });
    expect(await call("get_balance_as_of", { counterparty_id: "cp-nope", as_of_date: "2026-03-31" })).toMatchObject({
      status: "unbound_entity",
      error_code: "ENTITY_NOT_RESOLVED",
    });
    expect(await call("resolve_counterparty", { query: "Альфа" })).toMatchObject({
      status: "ambiguous",
      error_code: "LOW_CONFIDENCE_ENTITY_BINDING",
      rows: 2,
    });
    expect(await call("resolve_counterparty", { query: "Ромашка", role: "supplier" })).toMatchObject({
      status: "no_match",
      error_message: expect.stringMatching(/не в роли/),
    });
    expect(await call("resolve_counterparty", { query: "7705678901" })).toMatchObject({
      status: "success",
      output: { counterparty_id: "cp-vektor" },
    });
    expect(await call("get_payment_chain", { counterparty_id: "cp-romashka" })).toMatchObject({ status: "empty" });
    expect(await call("get_document_movements", { document_id: "pay-vk-466" })).toMatchObject({
      status: "empty",
      error_message: expect.stringMatching(/не проведён/),
    });
    expect(await call("resolve_period_or_asof", { text: "на конец марта" })).toMatchObject({
      status: "success",
      output: { as_of_date: "2026-03-31", source: "explicit" },
    });
  });

  it("keeps timeout, tool error, invalid output and schema errors apart", async () => {
    const faulty = inProcess(
      parseFaults(
        "get_open_supplier_settlements=delay:1500,get_payment_chain=error:база 1С недоступна,get_balance_as_of=bad_output",
      ),
    );
    const call = async (name: (typeof TOOL_NAMES)[number], args: Record<string, unknown>) =>
      classifyCall(name, await faulty.call(name, args, { timeoutMs: 300 }));
    const started = Date.now();
    expect(await call("get_open_supplier_settlements", { as_of_date: "2026-03-31" })).toMatchObject({
      status: "timeout",
      error_code: "MCP_TIMEOUT",
    });
    expect(Date.now() - started).toBeLessThan(1200);
    expect(await call("get_payment_chain", { counterparty_id: "cp-vektor" })).toMatchObject({
      status: "tool_error",
      error_code: "TOOL_EXECUTION_ERROR",
      error_message: "база 1С недоступна",
    });
    expect(await call("get_balance_as_of", { counterparty_id: "cp-vektor", as_of_date: "2026-03-31" })).toMatchObject({
      status: "invalid_output",
      error_code: "INVALID_TOOL_OUTPUT",
    });
    // rejected by the server's input schema, and a tool that does not exist
    expect(await call("get_document_movements", { document_id: 42 })).toMatchObject({
      status: "schema_error",
      error_code: "MCP_SCHEMA_ERROR",
    });
    expect(
      classifyCall("get_document_movements", await faulty.call("drop_table", {}, { timeoutMs: 300 })),
    ).toMatchObject({ status: "schema_error", error_code: "MCP_SCHEMA_ERROR" });
  });

  it("validates inputs before calling, skips dependents of a failed step and reports the route as aborted", async () => {
    const plan = planOf("Какое сальдо по ООО «Вектор» на 31.03.2026?");
    plan.steps = plan.steps.map((s) =>
      s.tool === "get_balance_as_of" ? { ...s, input: { ...s.input, as_of_date: "вчера" } } : s,
    );
    const { toolRuns } = await executePlan(plan, inProcess(), { timeoutMs: 5000 });
    expect(toolRuns.find((r) => r.tool_name === "get_balance_as_of")).toMatchObject({
      status: "schema_error",
      error_code: "MCP_SCHEMA_ERROR",
      output: null,
    });
    const timeoutPlan = planOf("Хвосты по поставщикам на 31.03.2026");
    const res = await executePlan(timeoutPlan, inProcess({ get_open_supplier_settlements: { delayMs: 1500 } }), {
      timeoutMs: 200,
    });
    expect(res.toolRuns.map((r) => [r.step_id, r.status, r.error_code])).toEqual([
      ["S2", "success", null],
      ["S4", "timeout", "MCP_TIMEOUT"],
      ["S5", "skipped", "ROUTE_EXECUTION_ABORTED"],
      ["S6", "skipped", "ROUTE_EXECUTION_ABORTED"],
      ["S7", "skipped", "ROUTE_EXECUTION_ABORTED"],
    ]);
  });

  it("bounds for_each and reports the truncation", async () => {
    const { truncated, toolRuns } = await executePlan(planOf("По каким поставщикам висят хвосты?"), inProcess(), {
      timeoutMs: 5000,
      maxForEach: 2,
    });
    expect(truncated).toContainEqual({ step_id: "S6", done: 2, total: 4 });
    expect(toolRuns.filter((r) => r.step_id === "S6")).toHaveLength(2);
  });

  it("works the same over Streamable HTTP, and an unreachable server is a tool execution error", async () => {
    const http = new McpConnection({ kind: "http", url: await httpServer() });
    conns.push(http);
    const { toolRuns } = await executePlan(
      planOf("Какие незакрытые документы по ООО «Альфа-Снаб» на 31.03.2026?"),
      http,
      { timeoutMs: 5000 },
    );
    expect(toolRuns.find((r) => r.tool_name === "get_unclosed_documents_for_counterparty")).toMatchObject({
      status: "success",
      rows_returned: 1,
    });
    const dead = new McpConnection({ kind: "http", url: "http://127.0.0.1:9/mcp" });
    conns.push(dead);
    expect(
      classifyCall(
        "get_payment_chain",
        await dead.call("get_payment_chain", { counterparty_id: "cp-vektor" }, { timeoutMs: 2000 }),
      ),
    ).toMatchObject({ status: "unavailable", error_code: "TOOL_EXECUTION_ERROR" });
  });
});

describe("a name narrowed by a role the user never stated (§6.2.3, §11.3)", () => {
  it("binds through the role, names the parties the role left out, and stays an assumption", async () => {
    const c = inProcess();
    const run = classifyCall(
      "resolve_counterparty",
      await c.call("resolve_counterparty", { query: "Альфа", role: "supplier" }, { timeoutMs: 5000 }),
    );
    expect(run.status).toBe("success");
    const out = run.output as { counterparty_id: string; outside_role?: { name: string }[] };
    expect(out.counterparty_id).toBe("cp-alfa-snab");
    expect(out.outside_role?.map((x) => x.name)).toEqual(["ООО «Альфа-Трейд»"]);
    // a name only one party fits has nothing to name
    const exact = classifyCall(
      "resolve_counterparty",
      await c.call("resolve_counterparty", { query: "ТехноПоставка", role: "supplier" }, { timeoutMs: 5000 }),
    );
    expect((exact.output as { outside_role?: unknown[] }).outside_role).toBeUndefined();

    const { buildEvidence } = await import("../../../systems/evidence/evidence-builder");
    const { ruleCoverage } = await import("../../../systems/evidence/critic-rules");
    const { advanceState } = await import("../../../systems/evidence/conversation-state");
    const { plan, scope, toolRun, dateOut } = await import("./fixtures");
    const P = plan([
      ["S1", "resolve_counterparty", true],
      ["S2", "resolve_period_or_asof", true],
    ]);
    const runs = [
      toolRun("S1", "resolve_counterparty", "success", run.output, { input: { query: "Альфа", role: "supplier" } }),
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
    ];
    const bundle = buildEvidence("r1", P, runs, []);
    expect(bundle.entity_bindings[0]).toMatchObject({
      status: "bound",
      narrowed_by_role: [{ name: "ООО «Альфа-Трейд»" }],
    });
    const cp = { surface: "Альфа", entity_id: null, premise: "confirmed" as const };
    const premise = {
      kind: "entity" as const,
      key: "counterparty",
      value: "Альфа",
      label: "Контрагент",
      status: "confirmed" as const,
      source: "user" as const,
      since_turn: 1,
    };
    for (const [role_said, assumed] of [
      [false, true],
      [true, false],
    ] as const) {
      const s = scope({ counterparty: cp, role_said, premises: [...scope().premises, premise] });
      const { coverage } = ruleCoverage({ requestId: "r1", frame: null, scope: s, plan: P, toolRuns: runs, bundle });
      const said = coverage.why_partial.find((w) => /подходит и: ООО «Альфа-Трейд»/.test(w.message));
      expect(!!said).toBe(assumed);
      if (assumed) expect(coverage.outcome).not.toBe("FULLY_ANSWERED");
      const state = advanceState(emptyConversationState("c1"), {
        frame: null,
        scope: s,
        coverage,
        bundle,
        clarifying_question: null,
        text: "Хвосты по Альфа",
      } as never);
      expect(state.active_entities.find((e) => e.type === "counterparty")?.premise).toBe(
        assumed ? "assumed" : "confirmed",
      );
    }
  });
});
