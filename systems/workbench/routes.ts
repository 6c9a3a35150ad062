import { Hono } from "hono";
import { AppError } from "../../driver/errors";
import { findConversation } from "../../storage/conversations";
import { getInteraction, listClarifications, listInteractions } from "./store/interactions";
import { listMessages } from "../../storage/messages";
import { snapshotSha256 } from "./canonical";
import { WorkspaceSnapshotSchema } from "./types";
import { duplicateIdentities, duplicateIdentitiesMessage } from "./workspace-check";
import { WORKBENCH_ROLES } from "./prompts";
import type { AuthEnv } from "../../http/auth";
import { accessOf, answerNewConversation, requestConversation } from "../../http/conversation-access";
import type { Deps } from "../../http/deps";
import { describeZod, readJson } from "../../http/errors";
import { refuseBegunRun, streamRun } from "../../http/sse";
import { beginRun } from "../../http/turn-begin";
import { messageTurn } from "./message";
import { loadDocsIndex, sampleWorkspace } from "./resources";
import { stageTrace } from "./stage-trace";
import { sampleWorkspaceRoutes } from "./operator-routes";
import { WorkbenchMessageBody, type WorkbenchEvents } from "./contract";
import { runMessageTurn } from "./turn";
import type { Workspace } from "./effects";

function readWorkspace(raw: unknown): Workspace {
  if (raw === undefined || raw === null) {
    const s = sampleWorkspace();
    return { parsed: s.parsed, sha: snapshotSha256(s.raw) };
  }
  const parsed = WorkspaceSnapshotSchema.safeParse(raw);
  if (!parsed.success) throw new AppError("invalid_request", `workspace: ${describeZod(parsed.error)}`);
  // Two documents under one identity would be mixed by every stage: refused before any runs.
  const dups = duplicateIdentities(parsed.data);
  if (dups.length)
    throw new AppError("invalid_request", duplicateIdentitiesMessage(dups), { duplicateIdentities: dups });
  // The hash is of what the backend sent (canonical JSON), not of our defaults-filled copy.
  return { parsed: parsed.data, sha: snapshotSha256(raw) };
}

/** A unique-key violation means another request changed the same rows first. */
function asConflict(e: unknown): unknown {
  if (e && typeof e === "object" && (e as { code?: string }).code === "23505") {
    return new AppError("conflict", "Диалог уже изменён параллельным запросом; повторите.");
  }
  return e;
}

/**
 * The Workbench's routes as one sub-app (CONTRACT §3, plus the console's sample workspace). Paths
 * are written out in full: the gateway mounts the sub-app at `/`.
 */
export function workbenchRoutes(deps: Deps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const sql = deps.db.sql;

  app.post("/v1/workbench/conversations", (c) => answerNewConversation(c, sql, "workbench"));

  app.get("/v1/workbench/conversations/:id", async (c) => {
    const conv = await requestConversation(c, sql, "workbench");
    const messages = await listMessages(sql, conv.id);
    const interactions = await listInteractions(sql, conv.id);
    return c.json({
      conversationId: conv.id,
      messages: messages.map((m) => ({
        seq: m.seq,
        role: m.role,
        text: m.text,
        meta: m.meta,
      })),
      interactions: interactions.map((i) => ({
        id: i.id,
        status: i.status,
        planVersion: i.planVersion,
        createdAt: i.createdAt,
      })),
    });
  });

  app.get("/v1/workbench/interactions/:id", async (c) => {
    const it = await getInteraction(sql, c.req.param("id"));
    // The interaction's conversation, with the request's access: a `chat` client reads only its own.
    const conv = it
      ? await findConversation(sql, c.get("tenantId"), it.conversationId, "workbench", accessOf(c))
      : null;
    if (!it || !conv) throw new AppError("not_found", "Запрос (interaction) не найден.");
    const clarifications = await listClarifications(sql, it.id);
    return c.json({
      id: it.id,
      conversationId: it.conversationId,
      status: it.status,
      planVersion: it.planVersion,
      plan: it.plan,
      rootMessageId: it.rootMessageId,
      workspace: { generation: it.workspaceGeneration, snapshotSha256: it.workspaceSnapshotSha256 },
      documentationVersion: it.documentationVersion,
      clarifications: clarifications.map((q) => ({
        id: q.id,
        taskId: q.taskId,
        slot: q.slot,
        question: q.question,
        candidates: q.candidates,
        status: q.status,
        planVersion: q.planVersion,
        questionMessageId: q.questionMessageId,
        answerMessageId: q.answerMessageId,
        createdAt: q.createdAt,
        resolvedAt: q.resolvedAt,
      })),
      createdAt: it.createdAt,
      updatedAt: it.updatedAt,
    });
  });

  app.post("/v1/workbench/conversations/:id/messages", async (c) => {
    const body = await readJson(c, WorkbenchMessageBody);
    const conv = await requestConversation(c, sql, "workbench");
    const workspace = readWorkspace(body.workspace);
    const wsRef = { generation: workspace.parsed.generation, snapshotSha256: workspace.sha };
    // The run is claimed first (Idempotency-Key replay, one running run per conversation), so a
    // retried answer replays its run instead of meeting its own applied answer as a conflict.
    const begun = await beginRun(c, deps, {
      conversationId: conv.id,
      tenantId: conv.tenantId,
      kind: "workbench",
      debug: body.debug,
    });
    if (begun.replay) return begun.replay;
    // The message as its one event; a reply the machine refuses is a plain 409/422 before the stream opens.
    const message = await messageTurn(sql, conv.id, body, wsRef).catch((e) => refuseBegunRun(begun.run, e));
    const docs = loadDocsIndex(deps.config.docsDir);
    return streamRun<WorkbenchEvents>(c, deps, {
      begun: begun.run,
      conversationId: conv.id,
      tenantId: conv.tenantId,
      kind: "workbench",
      deferStart: true,
      debug: body.debug,
      work: async (run) => {
        const trace = stageTrace(deps, run);
        const started = (e: { interactionId: string; planVersion: number; continuation: boolean }) => {
          run.emit("run_started", {
            runId: run.id,
            conversationId: conv.id,
            interactionId: e.interactionId,
            planVersion: e.planVersion,
          });
          trace.record("00", "ok", {
            runId: run.id,
            conversationId: conv.id,
            tenantId: conv.tenantId,
            interactionId: e.interactionId,
            planVersion: e.planVersion,
            continuation: e.continuation,
            workspace: {
              generation: workspace.parsed.generation,
              snapshotSha256: workspace.sha,
              documents: workspace.parsed.documents.length,
              sample: body.workspace === undefined,
            },
            documentation: docs ? { version: docs.version, sections: docs.sections.length } : null,
            llm: {
              offline: deps.llm.offline,
              models: Object.fromEntries(WORKBENCH_ROLES.map((r) => [r, deps.llm.modelFor(r)])),
            },
            budget: { preparatory: 2, final: 1 },
          });
          trace.record("01", "ok", {
            text: body.text,
            interactionId: body.interactionId ?? null,
            replyToClarificationId: body.replyToClarificationId ?? null,
            selectedCandidateId: body.selectedCandidateId ?? null,
          });
        };
        const ports = { deps, run, trace, conversationId: conv.id, workspace, docs, started };
        await runMessageTurn(ports, message, wsRef).catch((e) => Promise.reject(asConflict(e)));
      },
    });
  });
  app.route("/", sampleWorkspaceRoutes());
  return app;
}
