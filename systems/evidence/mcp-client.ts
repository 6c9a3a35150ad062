// One MCP connection through the official SDK client, over stdio (a spawned server), Streamable
// HTTP, or an in-process linked pair (the bundled demo server, no extra process). Connected
// lazily, reused across runs, and re-opened after the transport closes.
import { inSpan } from "../../driver/tracing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

export type McpEndpoint =
  | { kind: "stdio"; command: string; args: string[]; env?: Record<string, string>; cwd?: string }
  | { kind: "http"; url: string; headers?: Record<string, string> }
  | { kind: "in-process"; create: () => McpServer };

export type RawCall =
  | { ok: true; result: { isError?: boolean; structuredContent?: unknown; content?: unknown[] } }
  | { ok: false; error: unknown };

export interface ToolCaller {
  readonly label: string;
  call(name: string, args: Record<string, unknown>, o: { timeoutMs: number; signal?: AbortSignal }): Promise<RawCall>;
  close(): Promise<void>;
}

export function describeEndpoint(e: McpEndpoint): string {
  return e.kind === "stdio"
    ? `stdio: ${[e.command, ...e.args].join(" ")}`
    : e.kind === "http"
      ? `http: ${e.url}`
      : "in-process demo";
}

export class McpConnection implements ToolCaller {
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;
  readonly label: string;

  constructor(private readonly endpoint: McpEndpoint) {
    this.label = describeEndpoint(endpoint);
  }

  private transport(): Transport {
    const e = this.endpoint;
    if (e.kind === "stdio") {
      // Only what the server needs: PATH and friends (the SDK's safe defaults) plus the given env.
      return new StdioClientTransport({
        command: e.command,
        args: e.args,
        env: { ...(process.env as Record<string, string>), ...e.env },
        cwd: e.cwd,
        stderr: "pipe",
      });
    }
    if (e.kind === "http")
      return new StreamableHTTPClientTransport(new URL(e.url), { requestInit: { headers: e.headers ?? {} } });
    const [client, server] = InMemoryTransport.createLinkedPair();
    void e.create().connect(server);
    return client;
  }

  private async connect(): Promise<Client> {
    if (this.client) return this.client;
    this.connecting ??= (async () => {
      const client = new Client({ name: "evidence-executor", version: "1.0.0" });
      const transport = this.transport();
      transport.onclose = () => {
        if (this.client === client) this.client = null;
      };
      try {
        await client.connect(transport, { timeout: 60_000 });
        // Caches each tool's output schema, so the SDK validates structured results on this side too.
        await client.listTools();
      } catch (e) {
        await client.close().catch(() => {});
        throw e;
      }
      this.client = client;
      return client;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  async call(
    name: string,
    args: Record<string, unknown>,
    o: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<RawCall> {
    try {
      const client = await this.connect();
      const result = await inSpan("tool call", { "tool.name": name }, () =>
        client.callTool({ name, arguments: args }, undefined, { timeout: o.timeoutMs, signal: o.signal }),
      );
      return { ok: true, result: result as never };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /** Lists the server's tools (used by the trace and the readiness check). */
  async tools(): Promise<string[]> {
    const client = await this.connect();
    return (await client.listTools()).tools.map((t) => t.name);
  }

  async close(): Promise<void> {
    const c = this.client;
    this.client = null;
    await c?.close().catch(() => {});
  }
}
