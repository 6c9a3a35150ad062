// Builders for evidence unit tests: tool runs and scopes as the executor and resolver make them.
import type { ExecutionPlan, ToolRun } from "../../../systems/evidence/artifacts";
import type { TurnScope } from "../../../systems/evidence/frame-resolve";

let n = 0;
export function toolRun(
  step_id: string,
  tool_name: string,
  status: ToolRun["status"],
  output: unknown,
  extra: Partial<ToolRun> = {},
): ToolRun {
  return {
    tool_run_id: `tr-${++n}`,
    step_id,
    tool_name,
    status,
    input: {},
    started_at: "2026-04-10T10:00:00.000Z",
    finished_at: "2026-04-10T10:00:00.010Z",
    duration_ms: 10,
    rows_returned: Array.isArray((output as { rows?: unknown[] } | null)?.rows)
      ? (output as { rows: unknown[] }).rows.length
      : 0,
    error_code: null,
    error_message: null,
    output,
    ...extra,
  };
}

export function scope(over: Partial<TurnScope> = {}): TurnScope {
  return {
    intent: "detect_open_supplier_settlements",
    gate: "proceed",
    reading: "open_settlement_balance",
    counterparty: null,
    role: "supplier",
    time: { text: "31.03.2026", premise: "confirmed", source: "user" },
    premises: [
      {
        kind: "time_scope",
        key: "as_of_date",
        value: "31.03.2026",
        label: "Дата отсечения",
        status: "confirmed",
        source: "user",
        since_turn: 1,
      },
      {
        kind: "business_term",
        key: "хвосты",
        value: "open_settlement_balance",
        label: "Трактовка",
        status: "confirmed",
        source: "user",
        since_turn: 1,
      },
    ],
    reasons: [],
    clarifying_question: null,
    ...over,
  };
}

export const dateOut = (d = "2026-03-31") => ({
  status: "ok",
  note: "",
  as_of_date: d,
  period_from: null,
  period_to: null,
  source: "explicit",
  working_date: "2026-04-10",
  data_available_from: "2025-10-01",
});

export const settlementRow = (cp: string, name: string, balance: number) => ({
  counterparty_id: cp,
  counterparty_name: name,
  contract_id: `ct-${cp}`,
  contract_number: "1",
  balance,
  currency: "RUB",
  overdue_amount: 0,
  oldest_due_date: null,
  last_movement_date: "2026-03-01",
  source_ref: `РегистрНакопления.РасчетыСПоставщиками:ct-${cp}@2026-03-31`,
});

/** The party step's (S1) run that resolved the user's `query` to this one supplier. */
export const partyRun = (id: string, name: string, inn: string, query: string) =>
  toolRun(
    "S1",
    "resolve_counterparty",
    "success",
    {
      status: "ok",
      note: "",
      counterparty_id: id,
      candidates: [{ counterparty_id: id, name, inn, roles: ["supplier"], score: 1 }],
    },
    { input: { query } },
  );

/** The register step's (S4) successful run with these rows, `movements` movements scanned up to `date`. */
export const registerRun = (rows: unknown[], o: { movements?: number; date?: string } = {}) =>
  toolRun("S4", "get_open_supplier_settlements", "success", {
    status: "ok",
    note: "",
    as_of_date: o.date ?? "2026-03-31",
    movements_scanned: o.movements ?? 3,
    rows,
  });

export function plan(steps: [string, string | null, boolean][]): ExecutionPlan {
  return {
    request_id: "r1",
    plan_version: 1,
    goal: "g",
    planned_by: "deterministic",
    fallbacks: [],
    stop_conditions: [],
    steps: steps.map(([step_id, tool, required]) => ({
      step_id,
      type: tool ?? "code",
      tool: tool as never,
      input: {},
      required,
      depends_on: [],
      for_each: null,
      filter: null,
      purpose: `шаг ${step_id}`,
    })),
  };
}
