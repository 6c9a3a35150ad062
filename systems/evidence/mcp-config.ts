// Which MCP server the executor talks to. EVIDENCE_MCP:
//   unset | "demo"  → the bundled demo server in process (same database, linked SDK transport);
//   "stdio"         → the demo server spawned as a child process over stdio (systems/evidence/mcp-server/main.ts);
//   "stdio:<cmd …>" → any MCP server command over stdio;
//   "http(s)://…"   → a Streamable HTTP endpoint (e.g. `npm run mcp:demo -- --http 3100` → http://127.0.0.1:3100/mcp);
//   "off"           → no server: every tool call is reported as TOOL_EXECUTION_ERROR.
// EVIDENCE_MCP_TIMEOUT_MS bounds one tool call (default 10 000); EVIDENCE_MCP_FAULTS injects demo faults.
import { fileURLToPath } from "node:url";
import type { Tx } from "../../storage/db";
import { McpConnection, type McpEndpoint, type RawCall, type ToolCaller } from "./mcp-client";
import { seedDemoData } from "./mcp-server/demo-data";
import { createEvidenceMcpServer, parseFaults } from "./mcp-server/server";

export interface EvidenceMcpSettings {
  endpoint: McpEndpoint | null;
  timeoutMs: number;
  maxForEach: number;
}

export const DEMO_SERVER_SCRIPT = fileURLToPath(new URL("./mcp-server/main.ts", import.meta.url));

/** The demo server as a child process: node with the tsx loader, so no build step is needed. */
export function demoStdioEndpoint(env: Record<string, string> = {}): McpEndpoint {
  return { kind: "stdio", command: process.execPath, args: ["--import", "tsx", DEMO_SERVER_SCRIPT], env };
}

export function settingsFromEnv(env: Record<string, string | undefined>, sql: Tx): EvidenceMcpSettings {
  const spec = (env.EVIDENCE_MCP ?? "demo").trim();
  const timeoutMs = Number(env.EVIDENCE_MCP_TIMEOUT_MS) > 0 ? Number(env.EVIDENCE_MCP_TIMEOUT_MS) : 10_000;
  const maxForEach = Number(env.EVIDENCE_MAX_FOR_EACH) > 0 ? Number(env.EVIDENCE_MAX_FOR_EACH) : 6;
  const faults = parseFaults(env.EVIDENCE_MCP_FAULTS);
  let endpoint: McpEndpoint | null;
  if (spec === "off") endpoint = null;
  else if (/^https?:\/\//.test(spec)) endpoint = { kind: "http", url: spec };
  else if (spec === "stdio")
    endpoint = demoStdioEndpoint(
      Object.fromEntries(
        Object.entries(env).filter(([k, v]) => v !== undefined && /^(DATABASE_URL|EVIDENCE_MCP_)/.test(k)) as [
          string,
          string,
        ][],
      ),
    );
  else if (spec.startsWith("stdio:")) {
    const [command, ...args] = spec.slice(6).trim().split(/\s+/);
    endpoint = { kind: "stdio", command: command!, args };
  } else {
    // Seeding is awaited by EvidenceTools.prepare() before the first call.
    endpoint = { kind: "in-process", create: () => createEvidenceMcpServer(sql, faults) };
  }
  return { endpoint, timeoutMs, maxForEach };
}

const offCaller: ToolCaller = {
  label: "off",
  async call(): Promise<RawCall> {
    return { ok: false, error: new Error("MCP-сервер не настроен (EVIDENCE_MCP=off)") };
  },
  async close() {},
};

/** One connection per process and settings; reused by every run. */
export class EvidenceTools {
  private conn: ToolCaller | null = null;
  constructor(
    readonly settings: EvidenceMcpSettings,
    private readonly sql: Tx,
  ) {}

  get caller(): ToolCaller {
    if (!this.settings.endpoint) return offCaller;
    this.conn ??= new McpConnection(this.settings.endpoint);
    return this.conn;
  }

  /** The in-process demo needs its rows before the first call. */
  async prepare(): Promise<void> {
    if (this.settings.endpoint?.kind === "in-process") await seedDemoData(this.sql);
  }

  async close(): Promise<void> {
    await this.conn?.close();
    this.conn = null;
  }
}
