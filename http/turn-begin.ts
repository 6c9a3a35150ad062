import { createHash } from "node:crypto";
import type { Context } from "hono";
import { AppError } from "../driver/errors";
import { Run, type Claimed } from "../driver/run";
import { findIdempotencyKey, findRunningRun } from "../storage/idempotency";
import { failAbandonedRuns, getRun, type KeyClaim, type RunStart } from "../storage/runs";
import type { Deps } from "./deps";
import { followRunResponse, lastEventId } from "./run-follow";
import { bindLogContext, requestLogContext } from "./observability/logger";

export interface BeginOptions<S = unknown> {
  conversationId: string;
  tenantId: string;
  kind: string;
  debug?: boolean;
  /**
   * Starts the run row in a statement of the route's own (it reads the turn's context too); used
   * only without an Idempotency-Key, which is claimed with the run row by `startRun`. What it
   * read comes back as `Begun.started`.
   */
  start?: RunStart<S>;
}

/** A POST that starts a run either gets its new run, or (a retry with a known Idempotency-Key) the old run's replay. */
export type Begun<S = unknown> =
  (Claimed<Record<string, unknown>, S> & { replay?: undefined }) | { replay: Response; run?: undefined };

/** What an Idempotency-Key may be (every route that takes one). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/**
 * Everything decided before a turn's stream opens (doc/clients.md):
 * - `Idempotency-Key`: a key seen before with the same request replays that request's run
 *   (from Last-Event-ID, if sent) — never a second turn; with another request it is 409
 *   `idempotency_key_reused`. A key whose run failed (nothing was stored) starts a new run.
 * - concurrent messages, policy `reject`: while the conversation has a running run, a new one
 *   is 409 `conversation_busy` before any model call. The run row's unique index decides,
 *   so two processes on one database cannot both start.
 */
export async function beginRun<S = unknown>(c: Context, deps: Deps, o: BeginOptions<S>): Promise<Begun<S>> {
  const key = c.req.header("idempotency-key");
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key))
    throw new AppError("invalid_request", "Idempotency-Key: от 1 до 200 печатных символов ASCII без пробелов.");
  const requestHash = key === undefined ? "" : await hashRequest(c);
  for (let attempt = 0; ; attempt++) {
    let claim: KeyClaim | undefined;
    if (key !== undefined) {
      const held = await findIdempotencyKey(deps.db.sql, o.tenantId, key);
      if (held && held.requestHash !== requestHash) {
        throw new AppError(
          "conflict",
          "Этот Idempotency-Key уже использован для другого запроса. Для нового сообщения нужен новый ключ.",
          { reason: "idempotency_key_reused" },
        );
      }
      if (held && held.runStatus !== "failed" && held.runStatus !== null)
        return { replay: await replay(c, deps, held.runId) };
      claim = { key, requestHash, replaces: held?.runId ?? null };
    }
    let claimed: Claimed<Record<string, unknown>, S> | null;
    try {
      claimed = await Run.claim({
        sql: deps.db.sql,
        hub: deps.hub,
        conversationId: o.conversationId,
        tenantId: o.tenantId,
        kind: o.kind,
        owner: deps.instanceId,
        debug: o.debug ?? deps.config.aiDebug,
        detachGraceMs: deps.config.detachGraceMs,
        deadlines: { commitMs: deps.config.deadlines.commitMs, closeMs: deps.config.deadlines.closeMs },
        asyncCommits: deps.db.backend === "postgres",
        notifyFollowers: deps.db.backend === "postgres",
        claim,
        start: o.start,
      });
    } catch (e) {
      if (!isUniqueViolation(e) || attempt >= 2) throw e;
      const running = await findRunningRun(deps.db.sql, o.conversationId);
      if (running && Date.now() - running.heartbeatAt.getTime() <= deps.config.runs.staleMs) {
        throw new AppError(
          "conflict",
          "Предыдущее сообщение этого диалога ещё обрабатывается. Дождитесь ответа и отправьте снова.",
          {
            reason: "conversation_busy",
            runId: running.id,
          },
        );
      }
      // The running run's process died (no heartbeat): close it, then try again.
      if (running)
        await failAbandonedRuns(deps.db.sql, { staleAfterMs: deps.config.runs.staleMs, ownerIs: running.owner });
      continue;
    }
    if (claimed) {
      // Whatever the run hands its signal to (a model call) logs the request's ids.
      bindLogContext(claimed.run.signal, requestLogContext(c) ?? {});
      return claimed;
    }
    // Another request claimed the key between our read and our insert: replay it next round.
    if (attempt >= 2)
      throw new AppError("conflict", "Этот Idempotency-Key сейчас занят другим запросом.", {
        reason: "idempotency_key_in_use",
      });
  }
}

async function replay(c: Context, deps: Deps, runId: string): Promise<Response> {
  const run = await getRun(deps.db.sql, runId);
  if (!run)
    throw new AppError("not_found", "Запуск по этому Idempotency-Key удалён.", { reason: "run_not_found", runId });
  return followRunResponse(c, deps, run, lastEventId(c), {
    "x-run-id": run.id,
    "x-conversation-id": run.conversationId,
    "idempotent-replayed": "true",
  });
}

/** The request a key stands for: method, path and the JSON body with keys sorted (whitespace and key order do not matter). */
async function hashRequest(c: Context): Promise<string> {
  const text = await c.req.text();
  let body: unknown = text;
  try {
    body = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    /* not JSON: readJson has refused it already; hash the text */
  }
  return createHash("sha256").update(`${c.req.method} ${c.req.path}\n`).update(stableJson(body)).digest("hex");
}

/** Literal text between values (a bracket, a comma, a key) on stableJson's work stack. */
class Raw {
  constructor(readonly text: string) {}
}

/** JSON with object keys sorted; iterative, so a deeply nested body cannot overflow the stack. */
export function stableJson(value: unknown): string {
  const out: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (v instanceof Raw) out.push(v.text);
    else if (Array.isArray(v)) {
      out.push("[");
      stack.push(new Raw("]"));
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push(v[i]);
        if (i > 0) stack.push(new Raw(","));
      }
    } else if (v && typeof v === "object") {
      const keys = Object.keys(v).sort();
      out.push("{");
      stack.push(new Raw("}"));
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push((v as Record<string, unknown>)[keys[i]!]);
        stack.push(new Raw(`${i > 0 ? "," : ""}${JSON.stringify(keys[i])}:`));
      }
    } else out.push(JSON.stringify(v ?? null));
  }
  return out.join("");
}

function isUniqueViolation(e: unknown): boolean {
  return !!e && typeof e === "object" && (e as { code?: string }).code === "23505";
}
