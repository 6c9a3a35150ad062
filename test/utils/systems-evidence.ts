import { evidenceMcpHttpHandler } from "../../systems/evidence/mcp-server/server";
import type { useFetchServers } from "./server";

/**
 * The planner-role script most evidence scenarios share: the interpreter's reading of the question,
 * two empty planner replies (so the deterministic plan stands) and the critic's reply last.
 */
export const plannedBy = (interpretation: string, critique: string): string[] => [interpretation, "{}", "{}", critique];

/** The endpoint of the demo MCP server a test app serves itself at /v1/evidence/mcp (Streamable HTTP). */
export const ownMcp = (appUrl: string, headers: Record<string, string>) => ({
  endpoint: { kind: "http" as const, url: `${appUrl}/v1/evidence/mcp`, headers },
});

/** Serves the same demo MCP server with its core settlements tool answering too late; returns its /mcp URL. */
export const slowSettlementsMcp = async (
  serveFetch: ReturnType<typeof useFetchServers>,
  sql: Parameters<typeof evidenceMcpHttpHandler>[0],
): Promise<string> =>
  `${await serveFetch(evidenceMcpHttpHandler(sql, { get_open_supplier_settlements: { delayMs: 2_000 } }))}/mcp`;
