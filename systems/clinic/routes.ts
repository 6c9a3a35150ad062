import { Hono, type Context } from "hono";
import { HISTORY_MESSAGES, readClinicHuman, readClinicState, runClinicTurn } from "./turn";
import { runOperatorAction } from "./operator-turn";
import { followThread } from "../../http/thread-follow";
import { lastEventId, refusePastEnd } from "../../http/run-follow";
import { sseResponse } from "../../http/sse-response";
import { lastThreadEventSeq, threadWakeKey } from "../../storage/thread-events";
import { loadClinicTurnContext, type ClinicTurnContext } from "./store/turn-context";
import { clinicMessagesMeta } from "./message-meta";
import { accessOf, conversationNotFound, credentialHeaders } from "../../http/conversation-access";
import { createConversation, findConversation } from "../../storage/conversations";
import { listMessages } from "../../storage/messages";
import type { AuthEnv } from "../../http/auth";
import { configuredSecrets } from "../../http/secrets";
import { announceHandling } from "../../http/presence";
import type { Deps } from "../../http/deps";
import { readJson } from "../../http/errors";
import { streamRun } from "../../http/sse";
import { clinicAdminRoutes } from "./admin-routes";
import { clinicKbChunkRoutes } from "./kb-routes";
import { clinicDeskRoutes } from "./desk-routes";
import { ClinicMessageBody, type ClinicEvents } from "./contract";

/**
 * The clinic's routes as one sub-app: CONTRACT §5's patient chat here, settings and knowledge
 * base in admin-routes.ts, a document's chunks in kb-routes.ts. Paths are written out in full
 * (the gateway mounts the sub-app at `/`), so they read as CONTRACT.md and http/roles.ts name them.
 */
export function clinicRoutes(deps: Deps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  /** The request's thread: missing, another tenant's and (a `chat` token) not its own are one 404. */
  const thread = async (c: Context<AuthEnv>) => {
    const conv = await findConversation(
      deps.db.sql,
      c.get("tenantId"),
      c.req.param("threadId")!,
      "clinic",
      accessOf(c),
    );
    if (!conv) throw conversationNotFound();
    return conv;
  };

  app.post("/v1/clinic/threads", async (c) => {
    const conv = await createConversation(deps.db.sql, c.get("tenantId"), "clinic");
    return c.json({ threadId: conv.id, conversationToken: conv.credential }, 201, credentialHeaders(conv.credential));
  });

  app.get("/v1/clinic/threads/:threadId", async (c) => {
    const conv = await thread(c);
    // The event log's end is read first: an event stored meanwhile is then delivered by /events, not lost.
    const lastEventSeq = await lastThreadEventSeq(deps.db.sql, conv.id);
    const [state, human, messages] = await Promise.all([
      readClinicState(deps.db.sql, conv.id),
      readClinicHuman(deps.db.sql, conv.id),
      listMessages(deps.db.sql, conv.id),
    ]);
    const metas = await clinicMessagesMeta(deps.db.sql, conv.id, messages);
    // meta.runId names the turn's stored run: its debug stages are at GET /v1/runs/{runId}/stages.
    return c.json({
      threadId: conv.id,
      state,
      messages: messages.map((m, i) => ({
        role: m.role,
        text: m.text,
        meta: m.runId ? { ...metas[i], runId: m.runId } : metas[i],
      })),
      human,
      lastEventSeq,
    });
  });

  app.post("/v1/clinic/threads/:threadId/messages", async (c) => {
    const tenantId = c.get("tenantId");
    const threadId = c.req.param("threadId");
    const notFound = conversationNotFound;
    const access = accessOf(c);
    const read = () => loadClinicTurnContext(deps.db.sql, tenantId, threadId, HISTORY_MESSAGES, access);
    // Without an Idempotency-Key the run starts in the statement that reads the thread with
    // everything its turn reads (one round trip before the model is asked); a key is claimed
    // with the run row by startRun, so then the thread is read first, on its own.
    const keyed = c.req.header("idempotency-key") !== undefined;
    const early = keyed ? await read() : null;
    if (keyed && !early) throw notFound();
    const body = await readJson(c, ClinicMessageBody).catch(async (e: unknown) => {
      // A missing thread is a 404 whatever the body (as when the thread was read first).
      if (!keyed && !(await read())) throw notFound();
      throw e;
    });
    return streamRun<ClinicEvents, ClinicTurnContext>(c, deps, {
      conversationId: threadId,
      tenantId,
      kind: "clinic",
      idField: "threadId",
      debug: body.debug === true || deps.config.aiDebug,
      start: async (sql, run, o) => {
        const started = await loadClinicTurnContext(sql, tenantId, threadId, HISTORY_MESSAGES, access, {
          run,
          asyncCommit: o.asyncCommit,
        });
        if (!started) throw notFound();
        return started;
      },
      work: async (run, _writer, started) => {
        // Read with the run's start, or before it (a request with an Idempotency-Key: `start` does not run).
        // An operator holding the thread is the machine's `human` state: it answers with no model call.
        const ctx = (started ?? early)!;
        const handling = ctx.handling;
        const r = await runClinicTurn({
          sql: deps.db.sql,
          llm: deps.llm,
          run,
          tenantId,
          context: ctx,
          text: body.text,
          debugDir: deps.config.aiDebug ? deps.config.debugDir : undefined,
          handling,
          webhook: deps.webhook.enabled,
          secrets: configuredSecrets(deps.config),
        });
        // After the commit: an escalation's outbox row is due now, and every operator's desk hears
        // of it at once (the inbox lists it first without waiting for its poll); a held thread's operator is told.
        deps.webhook.kick();
        if (r.events.includes("escalated")) announceHandling(deps, tenantId, ctx.threadId, "escalate");
        if (r.events.includes("held_by_operator") || r.events.includes("red_flag"))
          deps.waker.poke(threadWakeKey(ctx.threadId));
      },
    });
  });

  /** An operator takes an escalated thread back from the human queue (the bot answers again). */
  app.post("/v1/clinic/threads/:threadId/release", async (c) => {
    const tenantId = c.get("tenantId");
    const threadId = c.req.param("threadId");
    const r = await runOperatorAction(
      deps.db.sql,
      tenantId,
      threadId,
      { kind: "release" },
      {
        webhook: deps.webhook.enabled,
      },
    );
    deps.waker.poke(threadWakeKey(threadId));
    deps.webhook.kick();
    return c.json({ threadId, released: true, state: r.state });
  });

  /**
   * The thread's live events for the patient's client (issue 32): an operator took the thread,
   * wrote, released or closed it, the patient wrote while it is held. Resumable by Last-Event-ID;
   * every tab of the thread gets every event; followed across processes (http/thread-follow.ts).
   */
  app.get("/v1/clinic/threads/:threadId/events", async (c) => {
    const conv = await thread(c);
    const after = lastEventId(c);
    // Events are numbered as they commit: an id past the last one was never sent (issue 43).
    if (after > 0) refusePastEnd(after, await lastThreadEventSeq(deps.db.sql, conv.id));
    return sseResponse(c, (stream) => followThread(deps, stream, conv.id, after));
  });

  app.route("/", clinicAdminRoutes(deps));
  app.route("/", clinicKbChunkRoutes(deps));
  app.route("/", clinicDeskRoutes(deps));
  return app;
}
