import type { Context } from "hono";
import { AppError } from "../driver/errors";
import {
  ABANDONED_MESSAGE,
  failAbandonedRuns,
  MAX_RUN_EVENTS,
  getRun,
  listRunEnding,
  listRunEvents,
  markFollowed,
  type RunEventRow,
  type RunRow,
} from "../storage/runs";
import type { Deps } from "./deps";
import { SseWriter } from "./sse-writer";
import { sseResponse, type SseStream } from "./sse-response";

/** Last-Event-ID as sent (header, else `?lastEventId=`); absent → 0. Digits only, at most 9. */
export function lastEventId(c: Context): number {
  const raw = (c.req.header("last-event-id") ?? c.req.query("lastEventId") ?? "0").trim();
  // Digits only: `parseInt` would take "5abc", and a 20-digit id overflowed the integer column.
  if (!/^\d{1,9}$/.test(raw))
    throw new AppError("invalid_request", "Last-Event-ID должен быть неотрицательным целым (не больше 9 цифр).");
  return Number(raw);
}

/**
 * A Last-Event-ID past the end of the log the stream follows (issue 43): no event will ever carry
 * the next id the client waits for, so the stream would stay open and silent (a deaf tab). A
 * structured 400 instead, naming the last id there is, so the client can resume from it.
 */
export function refusePastEnd(after: number, last: number): void {
  if (after > last)
    throw new AppError(
      "invalid_request",
      `Last-Event-ID ${after} — дальше конца журнала (последнее событие — ${last}): переподключитесь с Last-Event-ID не больше ${last}.`,
      { reason: "last_event_id_past_end", lastEventId: last },
    );
}

/** True when the client is an EventSource (or says it reads a stream): it gets 204, not a JSON 404. */
export const wantsStream = (c: Context) => (c.req.header("accept") ?? "").includes("text/event-stream");

/**
 * The answer to a client that follows a run from `after`: a finished run with nothing after
 * `after` is 204 No Content (an EventSource stops reconnecting on 204); otherwise an SSE
 * stream that replays what is stored after `after`, follows the live run and closes after `done`.
 */
export async function followRunResponse(
  c: Context,
  deps: Deps,
  run: RunRow,
  after: number,
  headers: Record<string, string> = {},
): Promise<Response> {
  const live = deps.hub.get(run.id);
  // A run this process serves has every event in memory: an id past its last is past the end.
  if (live && !live.ended) refusePastEnd(after, live.events.at(-1)?.seq ?? 0);
  if (run.status !== "running" && !live?.events.some((e) => e.seq > after)) {
    const rest = await listRunEvents(deps.db.sql, run.id, after);
    if (rest.length === 0) {
      const ending = await listRunEnding(deps.db.sql, run.id);
      // A recovery's ending is numbered past any id its dead process sent (MAX_RUN_EVENTS), so a
      // client with nothing after its id has the ending too.
      const done = ending.find((e) => e.event === "done");
      if (done) {
        refusePastEnd(after, done.seq);
        // Through Hono's context, so the request-log middleware's X-Request-Id goes with it.
        return c.body(null, 204, headers);
      }
    }
  }
  return sseResponse(c, (stream) => followRun(deps, stream, run.id, after), headers);
}

/**
 * Replays the stored events after `after`, then follows the live run: from memory when this
 * process serves it, else by reading what the serving process flushes to the database — on a
 * PostgreSQL server when that process announces it (LISTEN/NOTIFY, http/run-waker.ts), else
 * by polling. Ends after `done`.
 */
export async function followRun(deps: Deps, stream: SseStream, runId: string, after: number): Promise<void> {
  const writer = new SseWriter(stream);
  let last = after;
  let finished = false;
  const deliver = (e: RunEventRow) => {
    // Ids are consecutive, except a recovery's ending, numbered past MAX_RUN_EVENTS.
    if (e.seq !== last + 1 && !(e.seq > MAX_RUN_EVENTS && e.seq > last)) return false;
    writer.send(e);
    last = e.seq;
    if (e.event === "done") finished = true;
    return true;
  };
  const live = deps.hub.get(runId);
  if (live) {
    // Same process: memory has every event, stored or not, in order.
    await new Promise<void>((resolve) => {
      const catchUp = () => {
        for (const e of live.events) if (e.seq > last) deliver(e);
        // Ended and this client already has `done` (it resumed at the last id): nothing will come.
        if (live.ended && !live.events.some((e) => e.seq > last)) finished = true;
        if (finished || writer.isClosed) resolve();
      };
      const unsubscribe = deps.hub.subscribe(runId, () => {
        catchUp();
        if (finished || writer.isClosed) unsubscribe();
      });
      stream.onAbort(() => (unsubscribe(), resolve()));
      catchUp();
      if (finished) unsubscribe();
    });
  } else {
    // Read only when woken (its owner's announcement, a sweep's, LISTEN's reconnect), never on a
    // timer; the run is marked as followed for its owner by the waker, for all followers at once.
    const gone = new AbortController();
    stream.onAbort(() => gone.abort());
    const unfollow = deps.waker.follow(runId);
    await markFollowed(deps.db.sql, runId).catch(() => {});
    try {
      while (!finished && !writer.isClosed && !gone.signal.aborted) {
        // Armed before reading, so news stored while this reads still wakes the next wait.
        const news = deps.waker.arm(runId);
        const now = await getRun(deps.db.sql, runId);
        const rows = await listRunEvents(deps.db.sql, runId, last);
        for (const e of rows) if (!deliver(e)) break;
        if (finished) break;
        if (now && now.status !== "running" && rows.length === 0) {
          // Ended and nothing after Last-Event-ID: the client has it all — unless no `done`
          // was ever stored (a run closed by an older recovery), then it gets an ending.
          const stored = await listRunEnding(deps.db.sql, runId);
          if (!stored.some((e) => e.event === "done")) for (const e of endingOf(now)) deliver({ ...e, seq: last + 1 });
          break;
        }
        if (now?.status === "running" && Date.now() - now.heartbeatAt.getTime() > deps.config.runs.staleMs) {
          await failAbandonedRuns(deps.db.sql, { staleAfterMs: deps.config.runs.staleMs, ownerIs: now.owner });
          continue;
        }
        if ((await news.wait(gone.signal)) === "aborted") break;
      }
    } finally {
      unfollow();
    }
  }
  await writer.drain();
  writer.close();
}

/** The ending of an ended run that has none stored. */
function endingOf(run: RunRow): Omit<RunEventRow, "seq">[] {
  if (run.status !== "failed") return [{ event: "done", data: {} }];
  return [
    { event: "error", data: { code: run.errorCode ?? "internal", message: ABANDONED_MESSAGE } },
    { event: "done", data: {} },
  ];
}
