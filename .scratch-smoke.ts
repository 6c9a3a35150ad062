import { openDatabase } from "./storage/db";
import { seedDemoData } from "./evidence/mcp-server/demo-data";
import { createEvidenceMcpServer } from "./evidence/mcp-server/server";
import { McpConnection } from "./evidence/mcp-client";
import { executePlan } from "./evidence/executor";
import { planFor } from "./evidence/plan-rules";
import { resolveScope, buildFrame } from "./evidence/frame-resolve";
import { interpretDeterministic } from "./evidence/interpret-rules";
import { emptyConversationState } from "./evidence/artifacts";

const t0 = Date.now();
const db = await openDatabase({ dataDir: "memory://" });
await seedDemoData(db.sql);
console.log("db", Date.now() - t0);
const conn = new McpConnection({ kind: "in-process", create: () => createEvidenceMcpServer(db.sql) });
console.log(await conn.tools());
const state = emptyConversationState("c1");
for (const q of ["По каким поставщикам висят хвосты?", "Какое сальдо по ООО «Альфа»?", "Какие незакрытые документы по Вектор на 31.03.2026?"]) {
  const out = interpretDeterministic(q, state)!;
  const frame = buildFrame(out, { requestId: "r", conversationId: "c1", turn: 1, text: q, interpretedBy: "deterministic" }, state);
  const scope = resolveScope(frame, state);
  const plan = planFor(scope, "r");
  const r = await executePlan(plan, conn, { timeoutMs: 5000 });
  console.log(q, scope.gate, scope.reasons);
  for (const tr of r.toolRuns) console.log("  ", tr.step_id, tr.tool_name, JSON.stringify(tr.input), tr.status, tr.rows_returned, tr.error_code, tr.error_message?.slice(0, 100));
}
await conn.close();
await db.close();
