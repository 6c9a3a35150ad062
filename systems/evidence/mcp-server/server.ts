// The demo MCP server: the eight domain tools of seed 002 §12.1 over the acc_* tables, built
// with the official SDK. Input and output schemas are the shared contracts; the SDK validates
// both on this side, the executor validates again on its side.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Tx } from "../../../storage/db";
import { describeTool, TOOL_NAMES, toolInputs, toolOutputs, type ToolName } from "../tool-contracts";
import * as q from "./queries";

/** Test and demo faults: make a tool slow, fail, or answer outside its schema. */
export interface ToolFault {
  delayMs?: number;
  error?: string;
  badOutput?: boolean;
  /** Not offered at all: a server that lacks part of the contract. */
  absent?: boolean;
  /**
   * The tool's answer rewritten before it is sent, inside its contract: a base whose data carries
   * what a real one might (an instruction planted in a counterparty's name, a renamed row).
   */
  rewrite?: (out: Record<string, unknown>) => Record<string, unknown>;
}
export type Faults = Partial<Record<ToolName, ToolFault>>;

const impl: { [N in ToolName]: (sql: Tx, a: never) => Promise<unknown> } = {
  resolve_counterparty: q.resolveCounterparty,
  resolve_period_or_asof: q.resolvePeriodOrAsOf,
  get_open_supplier_settlements: q.getOpenSupplierSettlements,
  get_unclosed_documents_for_counterparty: q.getUnclosedDocuments,
  get_document_movements: q.getDocumentMovements,
  get_payment_chain: q.getPaymentChain,
  get_balance_as_of: q.getBalanceAsOf,
  get_related_closing_documents: q.getRelatedClosingDocuments,
};

export const DEMO_SERVER_INFO = { name: "evidence-demo-1c", version: "1.0.0" };

export function createEvidenceMcpServer(sql: Tx, faults: Faults = {}): McpServer {
  const server = new McpServer(DEMO_SERVER_INFO, { capabilities: { tools: {} } });
  for (const name of TOOL_NAMES) {
    if (faults[name]?.absent) continue;
    server.registerTool(
      name,
      { description: describeTool(name), inputSchema: toolInputs[name], outputSchema: toolOutputs[name] },
      (async (args: unknown, extra: { signal: AbortSignal }) => {
        const fault = faults[name];
        if (fault?.delayMs) await sleep(fault.delayMs, extra.signal);
        if (fault?.error) throw new Error(fault.error);
        const read = (await impl[name](sql, args as never)) as Record<string, unknown>;
        const out = fault?.rewrite ? fault.rewrite(read) : read;
        const structured = fault?.badOutput ? { ...out, status: "maybe", rows: "много" } : out;
        return {
          content: [{ type: "text" as const, text: JSON.stringify(structured) }],
          structuredContent: structured,
        };
      }) as never,
    );
  }
  return server;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * Streamable HTTP in stateless mode: every request gets its own server and transport (the
 * SDK's recommended shape when no session state is kept), answering JSON.
 */
export function evidenceMcpHttpHandler(sql: Tx, faults: Faults = {}): (req: Request) => Promise<Response> {
  return async (req) => {
    const server = createEvidenceMcpServer(sql, faults);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(req);
    } finally {
      void server.close().catch(() => {});
    }
  };
}

/** `get_open_supplier_settlements=delay:3000,get_payment_chain=error,get_balance_as_of=bad_output,get_document_movements=absent` */
export function parseFaults(spec: string | undefined): Faults {
  const faults: Faults = {};
  for (const item of (spec ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [tool, what] = item.split("=") as [string, string | undefined];
    if (!(TOOL_NAMES as readonly string[]).includes(tool) || !what) continue;
    const f: ToolFault = (faults[tool as ToolName] ??= {});
    if (what.startsWith("delay:")) f.delayMs = Number(what.slice(6)) || 0;
    else if (what === "bad_output") f.badOutput = true;
    else if (what === "absent") f.absent = true;
    else if (what.startsWith("error")) f.error = what.slice(6) || "сбой источника данных";
  }
  return faults;
}
