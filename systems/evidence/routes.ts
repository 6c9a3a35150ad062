// Evidence workflow endpoints (seed 002): conversations, streamed turns, per-run artifacts, the
// demo MCP server over Streamable HTTP, and outcome statistics of every system's runs.
import { TOOL_NAMES } from "./tool-contracts";
import { Hono, type Context } from "hono";
import { AppError } from "../../driver/errors";
import { restore } from "../../driver/turn";
import { emptyConversationState } from "./artifacts";
import { outcomeClassOf } from "./reason-codes";
import { EvidenceTools, settingsFromEnv, type EvidenceMcpSettings } from "./mcp-config";
import { seedDemoData } from "./mcp-server/demo-data";
import { evidenceMcpHttpHandler } from "./mcp-server/server";
import { evidenceSpec } from "./conversation.machine";
import { getEvidenceRun } from "./store/evidence-runs";
import { listMessages } from "../../storage/messages";
import { ESCALATION_PREFIX, outcomeStats } from "../../storage/outcome-stats";
import { handoffStats } from "../../storage/handoff-stats";
import { operatorStats } from "../../storage/operator-stats";
import type { AuthEnv } from "../../http/auth";
import { accessOf, answerNewConversation, requestConversation } from "../../http/conversation-access";
import type { Deps } from "../../http/deps";
import { readJson } from "../../http/errors";
import { streamRun } from "../../http/sse";
import { runEvidenceTurn } from "./turn";
import { EvidenceMessageBody, StatsQuery, type EvidenceEvents } from "./contract";

const toolsByDeps = new WeakMap<Deps, EvidenceTools>();

function toolsFor(deps: Deps): EvidenceTools {
  if (!toolsByDeps.has(deps))
    toolsByDeps.set(deps, new EvidenceTools(settingsFromEnv(process.env, deps.db.sql), deps.db.sql));
  return toolsByDeps.get(deps)!;
}

const seededBySql = new WeakMap<object, Promise<void>>();

/** The demo data seeded once per database; a failed seed is forgotten, so the next request retries it. */
function seededOnce(sql: Parameters<typeof seedDemoData>[0]): Promise<void> {
  if (!seededBySql.has(sql))
    seededBySql.set(
      sql,
      seedDemoData(sql).catch((e: unknown) => {
        seededBySql.delete(sql);
        throw e;
      }),
    );
  return seededBySql.get(sql)!;
}

/** Points this server's executor at another MCP server (tests, or an embedding application). */
export async function useEvidenceMcp(
  deps: Deps,
  s: Partial<EvidenceMcpSettings> & Pick<EvidenceMcpSettings, "endpoint">,
): Promise<void> {
  await toolsByDeps.get(deps)?.close();
  toolsByDeps.set(deps, new EvidenceTools({ timeoutMs: 10_000, maxForEach: 6, ...s }, deps.db.sql));
}

export async function closeEvidenceMcp(deps: Deps): Promise<void> {
  await toolsByDeps.get(deps)?.close();
  toolsByDeps.delete(deps);
}

/** The evidence workflow's routes as one sub-app; paths are written out in full (the gateway mounts it at `/`). */
export function evidenceRoutes(deps: Deps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const sql = deps.db.sql;
  const find = (c: Context<AuthEnv>) => requestConversation(c, sql, "evidence");

  app.post("/v1/evidence/conversations", (c) => answerNewConversation(c, sql, "evidence"));

  app.get("/v1/evidence/conversations/:id", async (c) => {
    const conv = await find(c);
    const snap = await restore(sql, evidenceSpec, conv.id);
    const messages = await listMessages(sql, conv.id);
    return c.json({
      conversationId: conv.id,
      state: snap?.snapshot.context.state ?? emptyConversationState(conv.id),
      last: snap?.snapshot.context.last
        ? {
            runId: snap.snapshot.context.last.requestId,
            outcome: snap.snapshot.context.last.outcome,
            reasonCodes: snap.snapshot.context.last.reasonCodes,
          }
        : null,
      messages: messages.map((m) => ({ role: m.role, text: m.text, meta: m.meta, runId: m.runId })),
    });
  });

  app.post("/v1/evidence/conversations/:id/messages", async (c) => {
    const body = await readJson(c, EvidenceMessageBody);
    const conv = await find(c);
    return streamRun<EvidenceEvents>(c, deps, {
      conversationId: conv.id,
      tenantId: conv.tenantId,
      kind: "evidence",
      debug: body.debug,
      work: (run) =>
        runEvidenceTurn({
          deps,
          run,
          tools: toolsFor(deps),
          conversationId: conv.id,
          tenantId: conv.tenantId,
          text: body.text,
        }),
    });
  });

  /** The engineering artifacts of one run (§14.1): QueryFrame … FinalAnswerPackage, stage timings. */
  app.get("/v1/evidence/runs/:runId", async (c) => {
    const r = await getEvidenceRun(sql, c.get("tenantId"), c.req.param("runId"), accessOf(c));
    if (!r) throw new AppError("not_found", "Такого запуска нет.");
    return c.json({
      runId: r.runId,
      conversationId: r.conversationId,
      turn: r.turn,
      question: r.question,
      outcome: r.outcome,
      reasonCodes: r.reasonCodes,
      artifacts: r.artifacts,
    });
  });

  /** The tools the configured MCP server offers: a readiness check for the evidence route. */
  app.get("/v1/evidence/tools", async (c) => {
    const tools = toolsFor(deps);
    await tools.prepare();
    const caller = tools.caller as { tools?: () => Promise<string[]>; label: string };
    // Ready only when every tool of the contract is offered: a server without them would fail mid-run.
    const report = (offered: string[]) => {
      const missing = TOOL_NAMES.filter((n) => !offered.includes(n));
      return { mcp: caller.label, tools: offered, expected: TOOL_NAMES, missing, ready: missing.length === 0 };
    };
    if (!caller.tools) return c.json(report([]));
    try {
      return c.json(report(await caller.tools()));
    } catch (e) {
      throw new AppError("internal", `MCP-сервер недоступен (${caller.label}): ${(e as Error).message}`);
    }
  });

  // The demo server over Streamable HTTP (stateless), for any MCP client; bearer auth applies as on all /v1.
  const mcpHttp = evidenceMcpHttpHandler(sql);
  app.all("/v1/evidence/mcp", async (c) => {
    await seededOnce(sql);
    return mcpHttp(c.req.raw);
  });

  /** Outcome classes and reason codes of every system's finished runs (seed 002 §16, stage 6). */
  app.get("/v1/stats/outcomes", async (c) => {
    const q = StatsQuery.safeParse(c.req.query());
    if (!q.success) throw new AppError("invalid_request", "kind — строка, since — дата ISO 8601.");
    const stats = await outcomeStats(sql, { tenantId: c.get("tenantId"), kind: q.data.kind, since: q.data.since });
    const classes = new Map<string, { kind: string; outcomeClass: string; runs: number }>();
    for (const o of stats.byOutcomeAndReasons) {
      const outcomeClass = outcomeClassOf(o.outcome, o.reasonCodes);
      const k = `${o.kind}|${outcomeClass}`;
      const cur = classes.get(k) ?? { kind: o.kind, outcomeClass, runs: 0 };
      classes.set(k, { ...cur, runs: cur.runs + o.runs });
    }
    const { byOutcomeAndReasons: _detail, ...rest } = stats;
    const byEscalationReason = stats.byReasonCode
      .filter((r) => r.reasonCode.startsWith(ESCALATION_PREFIX))
      .map((r) => ({ kind: r.kind, reason: r.reasonCode.slice(ESCALATION_PREFIX.length), runs: r.runs }));
    const handoffs = await handoffStats(sql, { tenantId: c.get("tenantId"), kind: q.data.kind, since: q.data.since });
    const byOperator = await operatorStats(sql, {
      tenantId: c.get("tenantId"),
      kind: q.data.kind,
      since: q.data.since,
    });
    return c.json({ ...rest, byOutcomeClass: [...classes.values()], byEscalationReason, handoffs, byOperator });
  });
  return app;
}
