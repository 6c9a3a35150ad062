import { rm } from "node:fs/promises";
import { join } from "node:path";
import { Hono, type Context } from "hono";
import { z } from "zod";
import { AppError } from "../../driver/errors";
import { conversationKinds } from "../../driver/system";
import {
  eraseConversation,
  findInboxItem,
  listInbox,
  setHandling,
  BadCursor,
  type InboxFilter as Filter,
} from "../../storage/inbox";
import { withinDeadline } from "../../storage/deadline";
import { listMessages } from "../../storage/messages";
import { failAbandonedRuns } from "../../storage/runs";
import { lastThreadEventSeq, notifyThread, threadWakeKey } from "../../storage/thread-events";
import type { AuthEnv } from "../auth";
import type { Deps, HttpDialogueSystem } from "../deps";
import { describeZod, readJson } from "../errors";
import type { OperatorAction } from "../../driver/operator-action";
import { announceHandling } from "../presence";
import { IDEMPOTENCY_KEY } from "../turn-begin";
import { AssignBody, inboxFilter, OperatorMessageBody, TakeBody, TransferBody } from "../inbox-contract";
import { colleague, knownOperators, operatorOf, type OperatorIdentity } from "../operator-identity";

/**
 * The operators' inbox (issue 17 item 1): every system's conversations in one list, one
 * conversation with its transcript, take / release / close, and erasure. Operator routes: all
 * under /v1/inbox/, plus each served system's own list (its contract's `inboxList`, e.g. GET
 * /v1/clinic/threads), so a role rule can cover them by path.
 */

/** The acting operator's name for the log, unless nobody in particular acts. */
const named = (o: OperatorIdentity) => (o.via === "anonymous" ? undefined : o.name);

export function inboxRoutes(deps: Deps, systems: readonly HttpDialogueSystem[] = deps.systems): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const sql = deps.db.sql;
  // `system` is one of the served systems' conversation kinds.
  const FilterQuery = inboxFilter(conversationKinds(systems));
  const parseFilter = (query: Record<string, string>, system?: string): Filter => {
    const parsed = FilterQuery.safeParse({ ...query, ...(system ? { system } : {}) });
    if (!parsed.success) throw new AppError("invalid_request", describeZod(parsed.error), parsed.error.issues);
    return parsed.data;
  };
  /** The inbox hooks of the system a conversation belongs to (driver/system.ts). */
  const inboxOf = (system: string) => systems.find((s) => s.name === system)?.inbox;
  const list = async (c: Context<AuthEnv>, f: Filter) => {
    // «Мои»: the asking operator's — who is it, if the token names nobody?
    const me = f.assigned === "me" ? operatorOf(c) : null;
    if (me && me.via !== "token")
      throw new AppError(
        "invalid_request",
        "Фильтр «мои» (assigned=me) нужен токен, привязанный к человеку (API_TOKENS: …:TOKEN:Имя).",
        { reason: "no_operator_identity" },
      );
    try {
      return await listInbox(sql, c.get("tenantId"), f, me?.name);
    } catch (e) {
      if (e instanceof BadCursor)
        throw new AppError("invalid_request", "Курсор не распознан: начните список заново без cursor.");
      throw e;
    }
  };
  const item = async (tenantId: string, id: string) => {
    const found = await findInboxItem(sql, tenantId, id);
    if (!found) throw new AppError("not_found", "Такого диалога нет.");
    return found;
  };

  app.get("/v1/inbox/conversations", async (c) => c.json(await list(c, parseFilter(c.req.query()))));
  for (const s of systems) {
    const own = s.contract.inboxList;
    if (own) app.get(own.path, async (c) => c.json(await list(c, parseFilter(c.req.query(), s.name))));
  }

  /** Whom a thread can be assigned or transferred to, and who asks (the inbox page's pickers and «мои»). */
  app.get("/v1/inbox/operators", (c) => {
    const me = operatorOf(c);
    return c.json({
      operators: knownOperators(deps.config.tokens, c.get("tenantId")),
      me: me.via === "token" ? me.name : null,
    });
  });

  app.get("/v1/inbox/conversations/:id", async (c) => {
    const conv = await item(c.get("tenantId"), c.req.param("id"));
    // Read before the transcript: an event stored meanwhile is then delivered by the thread's stream.
    const lastEventSeq = await lastThreadEventSeq(sql, conv.id);
    const messages = await listMessages(sql, conv.id);
    const hooks = inboxOf(conv.system);
    const metas = hooks?.messagesMeta ? await hooks.messagesMeta(sql, conv.id, messages) : messages.map((m) => m.meta);
    return c.json({
      ...conv,
      ...(hooks ? { state: await hooks.state(sql, conv.id) } : {}),
      messages: messages.map((m, i) => ({
        seq: m.seq,
        role: m.role,
        text: m.text,
        meta: m.runId ? { ...metas[i], runId: m.runId } : metas[i],
        createdAt: m.createdAt.toISOString(),
      })),
      lastEventSeq,
    });
  });

  /**
   * An operator's action as an event of the conversation's machine (systems/clinic/operator-turn.ts):
   * refused with 409 when the machine does not take it (a message into a thread nobody holds, a
   * take of a thread another operator holds). After the commit the webhook's row is due now.
   */
  const operate = async (tenantId: string, id: string, action: OperatorAction) => {
    const conv = await item(tenantId, id);
    const hooks = inboxOf(conv.system);
    if (!hooks) return null;
    const r = await hooks.operate(sql, tenantId, conv.id, action, { webhook: deps.webhook.enabled });
    if (!r.replayed) {
      deps.waker.poke(threadWakeKey(conv.id));
      deps.webhook.kick();
      if (action.kind !== "message") announceHandling(deps, tenantId, conv.id, action.kind);
    }
    return r;
  };

  /** The operator has the thread: the bot is silent (the machine's `human` state) until release. */
  app.post("/v1/inbox/conversations/:id/take", async (c) => {
    const tenantId = c.get("tenantId");
    const body = await readJson(c, TakeBody);
    const r = await operate(tenantId, c.req.param("id"), { kind: "take", operator: operatorOf(c, body.operator).name });
    if (!r) throw new AppError("conflict", "Взять можно только диалог пациента клиники.");
    return c.json(await item(tenantId, c.req.param("id")));
  });

  /**
   * The operator answers the patient (issue 32): any operator may write into a thread that is
   * taken (the author is the body's `operator`, else the one who took it); 409 when nobody holds
   * it. Stored as a message of role `operator`, delivered live on the thread's event stream.
   */
  app.post("/v1/inbox/conversations/:id/messages", async (c) => {
    const tenantId = c.get("tenantId");
    const key = c.req.header("idempotency-key");
    if (key !== undefined && !IDEMPOTENCY_KEY.test(key))
      throw new AppError("invalid_request", "Idempotency-Key: от 1 до 200 печатных символов ASCII без пробелов.");
    const body = await readJson(c, OperatorMessageBody);
    const who = operatorOf(c, body.operator);
    const r = await operate(tenantId, c.req.param("id"), {
      kind: "message",
      text: body.text,
      // Nobody in particular (a token bound to no person): written as the one who holds the thread.
      operator: who.via === "anonymous" ? undefined : who.name,
      idempotencyKey: key,
    });
    if (!r) throw new AppError("conflict", "Писать пользователю можно только в диалог пациента клиники.");
    const e = r.event;
    return c.json(
      {
        seq: e.seq,
        messageSeq: e.data.messageSeq as number,
        operator: e.data.operator as string,
        text: e.data.text as string,
        createdAt: e.at,
        replayed: r.replayed,
      },
      r.replayed ? 200 : 201,
    );
  });

  /**
   * Who will answer (issue 43): a thread nobody holds gets an assignee (the «мои» filter finds it);
   * null unassigns. A held thread changes hands by transfer instead (409 `held`).
   */
  app.post("/v1/inbox/conversations/:id/assign", async (c) => {
    const tenantId = c.get("tenantId");
    const body = await readJson(c, AssignBody);
    const assignee = body.assignee === null ? null : colleague(deps.config.tokens, tenantId, body.assignee);
    const conv = await item(tenantId, c.req.param("id"));
    const r = await operate(tenantId, conv.id, { kind: "assign", operator: operatorOf(c).name, assignee });
    if (!r) throw new AppError("conflict", "Назначить можно только диалог пациента клиники.");
    return c.json(await item(tenantId, conv.id));
  });

  /**
   * The holder's thread to a colleague with no bot in between (issue 43): the machine stays in
   * `human`, the colleague holds it from now. 409 `not_held` when nobody holds it.
   */
  app.post("/v1/inbox/conversations/:id/transfer", async (c) => {
    const tenantId = c.get("tenantId");
    const body = await readJson(c, TransferBody);
    const to = colleague(deps.config.tokens, tenantId, body.to);
    const by = operatorOf(c, body.operator);
    const conv = await item(tenantId, c.req.param("id"));
    const r = await operate(tenantId, conv.id, { kind: "transfer", operator: named(by), to });
    if (!r) throw new AppError("conflict", "Передать можно только диалог пациента клиники.");
    return c.json(await item(tenantId, conv.id));
  });

  /** Back to the bot: the escalation ends; a booking it suspended goes on at its step. */
  app.post("/v1/inbox/conversations/:id/release", async (c) => {
    const tenantId = c.get("tenantId");
    const conv = await item(tenantId, c.req.param("id"));
    const r = await operate(tenantId, conv.id, { kind: "release", operator: named(operatorOf(c)) });
    if (!r) {
      if (conv.status !== "taken" && !conv.escalated)
        throw new AppError("conflict", "Диалог не у оператора: освобождать нечего.");
      await setHandling(sql, tenantId, conv.id, { status: "open", clearEscalation: true });
      announceHandling(deps, tenantId, conv.id, "release");
    }
    return c.json(await item(tenantId, conv.id));
  });

  /** Done with it: no longer waiting; a new patient message opens it again. */
  app.post("/v1/inbox/conversations/:id/close", async (c) => {
    const tenantId = c.get("tenantId");
    const conv = await item(tenantId, c.req.param("id"));
    const r = await operate(tenantId, conv.id, { kind: "close", operator: named(operatorOf(c)) });
    if (!r) {
      await setHandling(sql, tenantId, conv.id, { status: "closed", clearEscalation: true });
      announceHandling(deps, tenantId, conv.id, "close");
    }
    return c.json(await item(tenantId, conv.id));
  });

  /** The right to erasure: the conversation and every row of it, and its AI_DEBUG files. */
  app.delete("/v1/inbox/conversations/:id", async (c) => {
    const tenantId = c.get("tenantId");
    const id = c.req.param("id");
    let r = await eraseConversation(sql, tenantId, id);
    // Erasure never waits on a run that no process runs (issue 47): a run whose process died, or
    // whose failure this process could not record while the database was away, is closed here
    // (as the sweep would close it), and the conversation erased.
    if (r.result === "running") {
      const closed = await withinDeadline(
        deps.config.deadlines.sweepMs,
        "run sweep",
        failAbandonedRuns(sql, {
          staleAfterMs: deps.config.runs.staleMs,
          exceptIds: deps.hub.liveIds(),
          conversationId: id,
        }),
      );
      if (closed.length) r = await eraseConversation(sql, tenantId, id);
    }
    if (r.result === "not_found") throw new AppError("not_found", "Такого диалога нет.");
    if (r.result === "running")
      throw new AppError("conflict", "Сейчас идёт ход этого диалога; удалите его после ответа.");
    await Promise.all(
      r.runIds.map((id) => rm(join(deps.config.debugDir, id), { recursive: true, force: true }).catch(() => {})),
    );
    // The thread's followers (they wait for news, not poll) find it gone and end: here and elsewhere.
    deps.waker.poke(threadWakeKey(id));
    if (deps.db.backend === "postgres") await notifyThread(sql, id).catch(() => {});
    return c.body(null, 204);
  });
  return app;
}
