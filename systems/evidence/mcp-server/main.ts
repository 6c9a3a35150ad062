// Runs the demo MCP server on its own: over stdio (default; what an MCP client spawns) or
// Streamable HTTP (`--http 3100`, endpoint /mcp). Database: EVIDENCE_MCP_DATABASE_URL, else
// DATABASE_URL, else an embedded PGlite (EVIDENCE_MCP_DATA_DIR, default memory://).
// stdout belongs to the protocol in stdio mode: every log line goes to stderr.
import { serve } from "@hono/node-server";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { openDatabase } from "../../../storage/db";
import { seedDemoData } from "./demo-data";
import { createEvidenceMcpServer, evidenceMcpHttpHandler, parseFaults } from "./server";

const log = (l: string) => process.stderr.write(`[evidence-mcp] ${l}\n`);
const args = process.argv.slice(2);
const httpAt = args.indexOf("--http");
const url = process.env.EVIDENCE_MCP_DATABASE_URL || process.env.DATABASE_URL || undefined;
const db = await openDatabase(url ? { url, max: 4 } : { dataDir: process.env.EVIDENCE_MCP_DATA_DIR || "memory://" });
await seedDemoData(db.sql);
const faults = parseFaults(process.env.EVIDENCE_MCP_FAULTS);
if (Object.keys(faults).length) log(`faults: ${JSON.stringify(faults)}`);

const stop = async () => {
  await db.close().catch(() => {});
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);

if (httpAt >= 0) {
  const port = Number(args[httpAt + 1] ?? 3100);
  const handle = evidenceMcpHttpHandler(db.sql, faults);
  serve(
    {
      fetch: (req) => (new URL(req.url).pathname === "/mcp" ? handle(req) : new Response("not found", { status: 404 })),
      port,
      hostname: "127.0.0.1",
    },
    (info) => log(`Streamable HTTP on http://127.0.0.1:${info.port}/mcp (${db.backend})`),
  );
} else {
  const server = createEvidenceMcpServer(db.sql, faults);
  await server.connect(new StdioServerTransport());
  process.stdin.on("close", stop);
  log(`stdio ready (${db.backend})`);
}
