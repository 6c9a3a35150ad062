import { afterAll, beforeAll } from "vitest";
import { closeEvidenceMcp, useEvidenceMcp } from "../../systems/evidence/routes";
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

type McpApp = {
  url: string;
  deps: Parameters<typeof useEvidenceMcp>[0];
  db: { sql: Parameters<typeof evidenceMcpHttpHandler>[0] };
};

/**
 * For one test file: before its tests `app` reaches its own demo MCP server and a slow copy is served
 * beside it; after them `app` and every server in `also` drop their MCP clients. Returns the slow
 * copy's /mcp URL once the file's tests run.
 */
export function useOwnMcpAndSlowCopy(
  app: McpApp,
  headers: Record<string, string>,
  serveFetch: ReturnType<typeof useFetchServers>,
  also: { deps: McpApp["deps"] }[] = [],
): () => string {
  let slowUrl = "";
  beforeAll(async () => {
    await useEvidenceMcp(app.deps, ownMcp(app.url, headers));
    slowUrl = await slowSettlementsMcp(serveFetch, app.db.sql);
  }, 120_000);
  afterAll(async () => {
    for (const s of [app, ...also]) await closeEvidenceMcp(s.deps).catch(() => {});
  });
  return () => slowUrl;
}
