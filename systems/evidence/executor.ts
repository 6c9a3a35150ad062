// Runs an ExecutionPlan step by step against the MCP tools: no model in this loop (seed 002
// §6.2 "никакой свободной импровизации LLM при исполнении"). Inputs are resolved from earlier
// outputs and validated against the tool's contract before the call; every call — and every
// call that could not be made — leaves a ToolRun.
import { randomUUID } from "node:crypto";
import type { ExecutionPlan, PlanStep, ToolRun } from "./artifacts";
import type { ToolCaller } from "./mcp-client";
import { classifyCall } from "./tool-outcome";
import { toolInputs, type ToolName } from "./tool-contracts";

export interface ExecuteOptions {
  timeoutMs: number;
  /** Bound on the iterations of one for_each step (§6.2 budget); the rest is reported as truncated. */
  maxForEach?: number;
  signal?: AbortSignal;
  onToolRun?: (run: ToolRun) => void;
}

export interface ExecutionResult {
  toolRuns: ToolRun[];
  truncated: { step_id: string; done: number; total: number }[];
}

const OK = new Set(["success", "empty"]);
const TOOLING = new Set(["timeout", "tool_error", "schema_error", "invalid_output", "unavailable"]);

export function field(obj: unknown, key: string): unknown {
  return obj && typeof obj === "object" ? (obj as Record<string, unknown>)[key] : undefined;
}

/** A for_each filter (`balance > 0`) on one item; an unreadable filter lets it through. */
export function passes(item: unknown, filter: string | null): boolean {
  if (!filter) return true;
  const m = filter.match(/^\s*([a-z_]+)\s*(>=|<=|!=|>|<|=)\s*(-?\d+(?:\.\d+)?)\s*$/);
  if (!m) return true;
  const v = Number(field(item, m[1]!));
  const n = Number(m[3]);
  switch (m[2]) {
    case ">":
      return v > n;
    case "<":
      return v < n;
    case ">=":
      return v >= n;
    case "<=":
      return v <= n;
    case "=":
      return v === n;
    default:
      return v !== n;
  }
}

export async function executePlan(
  plan: ExecutionPlan,
  caller: ToolCaller,
  o: ExecuteOptions,
): Promise<ExecutionResult> {
  const runs: ToolRun[] = [];
  const truncated: ExecutionResult["truncated"] = [];
  const byStep = new Map<string, ToolRun[]>();
  const maxForEach = o.maxForEach ?? 6;

  const record = (
    step: PlanStep,
    input: Record<string, unknown>,
    partial: Omit<
      ToolRun,
      "tool_run_id" | "step_id" | "tool_name" | "input" | "started_at" | "finished_at" | "duration_ms"
    >,
    started = Date.now(),
    finished = Date.now(),
  ) => {
    const run: ToolRun = {
      tool_run_id: randomUUID(),
      step_id: step.step_id,
      tool_name: step.tool ?? step.type,
      input,
      started_at: new Date(started).toISOString(),
      finished_at: new Date(finished).toISOString(),
      duration_ms: finished - started,
      ...partial,
    };
    runs.push(run);
    byStep.set(step.step_id, [...(byStep.get(step.step_id) ?? []), run]);
    o.onToolRun?.(run);
    return run;
  };

  for (const step of plan.steps) {
    if (!step.tool) continue; // a resolution done by code (e.g. the business term), not a tool call
    const tool = step.tool as ToolName;
    const failedDep = step.depends_on.find((d) => {
      const rs = byStep.get(d);
      return rs !== undefined && rs.length > 0 && !rs.some((r) => OK.has(r.status));
    });
    if (failedDep) {
      // A data gap upstream (no match, ambiguous binding) is not a route failure; a tool failure is.
      const tooling = byStep
        .get(failedDep)!
        .some((r) => TOOLING.has(r.status) || r.error_code === "ROUTE_EXECUTION_ABORTED");
      record(step, step.input, {
        status: "skipped",
        rows_returned: 0,
        error_code: tooling ? "ROUTE_EXECUTION_ABORTED" : null,
        error_message: `шаг ${failedDep} не дал результата, на который опирается этот шаг`,
        output: null,
      });
      continue;
    }
    let items: unknown[] = [undefined];
    if (step.for_each) {
      const [src, key] = step.for_each.split(".") as [string, string];
      items = (byStep.get(src) ?? [])
        .filter((r) => OK.has(r.status))
        .flatMap((r) => (field(r.output, key) as unknown[] | undefined) ?? [])
        .filter((it) => passes(it, step.filter));
    }
    const inputs: Record<string, unknown>[] = [];
    const seen = new Set<string>();
    let unresolved: string | null = null;
    for (const item of items) {
      const input: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(step.input)) {
        const ref = typeof v === "string" ? v.match(/^\$(S\d+|each)\.([a-z_]+)$/) : null;
        if (!ref) input[k] = v;
        else if (ref[1] === "each") input[k] = field(item, ref[2]!);
        else input[k] = field(byStep.get(ref[1]!)?.find((r) => OK.has(r.status))?.output, ref[2]!);
        if (ref && (input[k] === undefined || input[k] === null)) unresolved = `${v}`;
      }
      const key = JSON.stringify(input);
      if (!seen.has(key)) (seen.add(key), inputs.push(input));
    }
    if (unresolved && inputs.length <= 1) {
      record(step, inputs[0] ?? step.input, {
        status: "skipped",
        rows_returned: 0,
        error_code: "ROUTE_EXECUTION_ABORTED",
        error_message: `нет значения для ${unresolved}`,
        output: null,
      });
      continue;
    }
    if (inputs.length > maxForEach) truncated.push({ step_id: step.step_id, done: maxForEach, total: inputs.length });
    for (const input of inputs.slice(0, maxForEach)) {
      if (o.signal?.aborted) {
        record(step, input, {
          status: "skipped",
          rows_returned: 0,
          error_code: "ROUTE_EXECUTION_ABORTED",
          error_message: "выполнение прервано",
          output: null,
        });
        continue;
      }
      const typed = toolInputs[tool].safeParse(input);
      if (!typed.success) {
        record(step, input, {
          status: "schema_error",
          rows_returned: 0,
          error_code: "MCP_SCHEMA_ERROR",
          error_message: `вход не соответствует схеме ${tool}: ${typed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
          output: null,
        });
        continue;
      }
      const started = Date.now();
      // A signal per call: the SDK leaves its listener on the signal it is given, and a run makes many calls.
      const local = new AbortController();
      const relay = () => local.abort();
      o.signal?.addEventListener("abort", relay, { once: true });
      const raw = await caller
        .call(tool, typed.data as Record<string, unknown>, { timeoutMs: o.timeoutMs, signal: local.signal })
        .finally(() => o.signal?.removeEventListener("abort", relay));
      const c = classifyCall(tool, raw, o.signal?.aborted ?? false);
      record(
        step,
        typed.data as Record<string, unknown>,
        {
          status: c.status,
          rows_returned: c.rows,
          error_code: c.error_code,
          error_message: c.error_message,
          output: c.output,
        },
        started,
        Date.now(),
      );
    }
  }
  return { toolRuns: runs, truncated };
}
