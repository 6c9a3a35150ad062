// Classifies one MCP call into a ToolRun status and reason code (seed 002 §8.4, §12.3): empty,
// no match, unbound entity, schema error, invalid output, timeout and tool error stay apart.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ToolRunStatus } from "./artifacts";
import type { RawCall } from "./mcp-client";
import type { ReasonCode } from "./reason-codes";
import { toolOutputs, type ToolName } from "./tool-contracts";

export interface Classified {
  status: ToolRunStatus;
  error_code: ReasonCode | null;
  error_message: string | null;
  output: Record<string, unknown> | null;
  rows: number;
}

const text = (content: unknown[] | undefined) =>
  (content ?? [])
    .map((c) => (c && typeof c === "object" && "text" in c ? String((c as { text: unknown }).text) : ""))
    .join(" ")
    .trim();

const fail = (status: ToolRunStatus, error_code: ReasonCode, error_message: string): Classified => ({
  status,
  error_code,
  error_message: error_message.slice(0, 500),
  output: null,
  rows: 0,
});

export function classifyCall(tool: ToolName, raw: RawCall, aborted = false): Classified {
  if (!raw.ok) {
    const e = raw.error;
    const msg = e instanceof Error ? e.message : String(e);
    if (aborted) return fail("unavailable", "ROUTE_EXECUTION_ABORTED", "выполнение прервано: клиент отключился");
    if (e instanceof McpError) {
      if (e.code === ErrorCode.RequestTimeout) return fail("timeout", "MCP_TIMEOUT", msg);
      if (/structured content|output schema/i.test(msg)) return fail("invalid_output", "INVALID_TOOL_OUTPUT", msg);
      if (e.code === ErrorCode.InvalidParams || e.code === ErrorCode.MethodNotFound)
        return fail("schema_error", "MCP_SCHEMA_ERROR", msg);
    }
    if (/timed? ?out/i.test(msg)) return fail("timeout", "MCP_TIMEOUT", msg);
    return fail("unavailable", "TOOL_EXECUTION_ERROR", `MCP-сервер недоступен: ${msg}`);
  }
  const r = raw.result;
  if (r.isError) {
    const msg = text(r.content) || "инструмент вернул ошибку без текста";
    if (/Output validation error/i.test(msg)) return fail("invalid_output", "INVALID_TOOL_OUTPUT", msg);
    if (/Input validation error|Invalid arguments|Tool \S+ not found/i.test(msg))
      return fail("schema_error", "MCP_SCHEMA_ERROR", msg);
    return fail("tool_error", "TOOL_EXECUTION_ERROR", msg);
  }
  const parsed = toolOutputs[tool].safeParse(r.structuredContent);
  if (!parsed.success)
    return fail(
      "invalid_output",
      "INVALID_TOOL_OUTPUT",
      `ответ ${tool} не соответствует контракту: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  const out = parsed.data as Record<string, unknown> & {
    status: string;
    rows?: unknown[];
    candidates?: unknown[];
    note: string;
  };
  const rows = Array.isArray(out.rows)
    ? out.rows.length
    : Array.isArray(out.candidates)
      ? out.candidates.length
      : out.status === "ok"
        ? 1
        : 0;
  switch (out.status) {
    case "ok":
      return { status: "success", error_code: null, error_message: null, output: out, rows };
    case "empty":
      return { status: "empty", error_code: null, error_message: out.note, output: out, rows: 0 };
    case "no_match":
      return { status: "no_match", error_code: "NO_MATCH_IN_1C", error_message: out.note, output: out, rows: 0 };
    case "unbound_entity":
      return {
        status: "unbound_entity",
        error_code: "ENTITY_NOT_RESOLVED",
        error_message: out.note,
        output: out,
        rows: 0,
      };
    default:
      return {
        status: "ambiguous",
        error_code: "LOW_CONFIDENCE_ENTITY_BINDING",
        error_message: out.note,
        output: out,
        rows,
      };
  }
}
