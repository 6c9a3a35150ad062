import type { Context } from "hono";
import { AppError } from "../driver/errors";
import { inSpan } from "../driver/tracing";
import { bindLogContext, logContextOf, logger, withIds, type LogContext } from "./observability/logger";
import { metrics } from "./observability/metrics";
import { closeTurnLine, openTurnLine } from "./observability/turn-line";
import { Run, type Outcome } from "../driver/run";
import type { EventsOf, runEvents } from "./contract";
import type { RunEventRow, RunStart } from "../storage/runs";
import type { Deps } from "./deps";
import { toAppError } from "./errors";
import { sseResponse, type SseStream } from "./sse-response";
import { beginRun } from "./turn-begin";

export { SseWriter } from "./sse-writer";
import { SseWriter } from "./sse-writer";

/** The events every streamed run carries; a system's map (its contract) extends them. */
type RunEvents = EventsOf<typeof runEvents>;

export interface StreamRunOptions<E extends RunEvents = RunEvents, S = unknown> {
  conversationId: string;
  tenantId: string;
  kind: string;
  /** How run_started names the conversation (`conversationId`, or `threadId` for the clinic). */
  idField?: "conversationId" | "threadId";
  /** When true, `work` emits run_started itself (e.g. with an interactionId it has to find first). */
  deferStart?: boolean;
  debug?: boolean;
  /** The turn; `started` is what `start` read with the run row (undefined when `start` did not run: a keyed request). */
  work: (run: Run<E>, writer: SseWriter, started: S | undefined) => Promise<void>;
  /** Called when `work` finishes without completing the run through the driver. */
  outcome?: Outcome;
  /** A run the route began itself (beginRun) because it had work to do between the claim and the stream. */
  begun?: Run;
  /** How the run row starts when the request has no Idempotency-Key (http/turn-begin.ts `BeginOptions.start`). */
  start?: RunStart<S>;
}

/**
 * Runs one streamed turn: run_started … (error) … done, always ending with `done`. The run is
 * claimed before the stream opens (http/turn-begin.ts): a busy conversation or a reused
 * Idempotency-Key is a plain HTTP 409, a retried key replays its run; the stream's headers
 * carry X-Run-Id and X-Conversation-Id. A server shutting down takes no new turn.
 */
export async function streamRun<E extends RunEvents = RunEvents, S = unknown>(
  c: Context,
  deps: Deps,
  o: StreamRunOptions<E, S>,
): Promise<Response> {
  if (deps.turns.draining)
    throw new AppError(
      "unavailable",
      "Сервер останавливается и новых ходов не принимает; повторите запрос через несколько секунд.",
    );
  if (o.begun) return streamBegunRun(c, deps, o.begun as unknown as Run<E>, o, undefined);
  const entered = performance.now();
  const begun = await beginRun(c, deps, {
    conversationId: o.conversationId,
    tenantId: o.tenantId,
    kind: o.kind,
    debug: o.debug,
    start: o.start,
  });
  if (begun.replay) return begun.replay;
  metrics.turnPhaseSeconds.observe({ system: o.kind, phase: "admit" }, (begun.run.timing.claimed - entered) / 1000);
  return streamBegunRun(c, deps, begun.run as unknown as Run<E>, o, begun.started);
}

/** A route that began the run but then refused the request (before any stream): the run is discarded, the error goes out as JSON. */
export async function refuseBegunRun(run: Run, e: unknown): Promise<never> {
  await run
    .discard()
    .catch((de) =>
      logger.error(
        withIds(logContextOf(run.signal), { event: "run_discard_failed", err: describe(de) }),
        "could not discard a refused run",
      ),
    );
  throw e;
}

function streamBegunRun<E extends RunEvents, S>(
  c: Context,
  deps: Deps,
  run: Run<E>,
  o: StreamRunOptions<E, S>,
  startRead: S | undefined,
): Response {
  const headers = { "x-run-id": run.id, "x-conversation-id": o.conversationId };
  return sseResponse(
    c,
    async (stream) => {
      const writer = new SseWriter(stream);
      run.attach((e) => writer.send(e));
      // The request's context (bound by beginRun) gains the run's ids: every line of the turn
      // carries them. The request and the model calls wait for the turn's line (turn-line.ts).
      let log = logContextOf(run.signal);
      if (!log) bindLogContext(run.signal, (log = {} as LogContext));
      Object.assign(log, { tenantId: o.tenantId, runId: run.id, conversationId: o.conversationId, system: o.kind });
      openTurnLine(log);
      metrics.openStreams.inc({ kind: "turn" });
      // The turn counts from its run being stored (the end of `admit`), the point its phases
      // (first_token, commit) count from too, so they always fit inside it.
      const started = Number.isFinite(run.timing.claimed) ? run.timing.claimed : performance.now();
      const turn = inSpan(
        "turn",
        { "run.id": run.id, "conversation.id": o.conversationId, "tenant.id": o.tenantId, system: o.kind },
        async (span) => {
          stream.onAbort(() => run.detach());
          try {
            if (!o.deferStart)
              run.emit("run_started", { runId: run.id, [o.idField ?? "conversationId"]: o.conversationId });
            await o.work(run, writer, startRead);
            if (!run.ended)
              await inSpan("commit", { "run.id": run.id }, () => run.commit([], o.outcome)).then((publish) =>
                publish(),
              );
          } catch (e) {
            const shutdown = deps.turns.stoppedByShutdown(run as unknown as Run);
            const gone = run.signal.aborted;
            const err = toAppError(e);
            const code = shutdown ? "unavailable" : gone ? "internal" : err.code;
            metrics.errors.inc({ where: "turn", code });
            logger.error(
              withIds(log, {
                event: "turn_failed",
                code,
                cause: shutdown ? "shutdown" : gone ? "client_gone" : "error",
                err: describe(e),
              }),
              "turn failed",
            );
            span.setAttribute("turn.error", code);
            await run
              .fail(
                code,
                shutdown
                  ? SHUTDOWN_MESSAGE
                  : gone
                    ? "Клиент отключился; ход не сохранён — отправьте сообщение ещё раз."
                    : err.message,
              )
              .catch((fe) =>
                logger.error(
                  withIds(log, { event: "run_fail_not_recorded", err: describe(fe) }),
                  "could not record run failure",
                ),
              );
          }
          const outcome = run.result?.outcome ?? "unknown";
          const seconds = (performance.now() - started) / 1000;
          metrics.turns.inc({ system: o.kind, outcome });
          metrics.turnSeconds.observe({ system: o.kind }, seconds);
          observePhases(o.kind, run.timing);
          span.setAttribute("turn.outcome", outcome);
          logger.info(
            withIds(log, {
              event: "turn",
              status: run.result?.status ?? "unknown",
              outcome,
              errorCode: run.result?.errorCode,
              latencyMs: Math.round(seconds * 1000),
              events: run.eventCount,
              ...closeTurnLine(log),
            }),
            "turn",
          );
        },
      );
      deps.turns.track(run as unknown as Run, turn);
      try {
        await turn;
      } finally {
        metrics.openStreams.dec({ kind: "turn" });
        // Wakes whoever follows every turn (the inspector bridge reads the machine events it logged).
        deps.waker.announce(run.id);
      }
      await writer.drain();
      writer.close();
    },
    headers,
  );
}

function observePhases(system: string, t: Run["timing"]): void {
  if (Number.isFinite(t.firstToken))
    metrics.turnPhaseSeconds.observe({ system, phase: "first_token" }, (t.firstToken - t.claimed) / 1000);
  if (Number.isFinite(t.committed))
    metrics.turnPhaseSeconds.observe({ system, phase: "commit" }, (t.committed - t.commitStart) / 1000);
}

export const SHUTDOWN_MESSAGE = "Сервер перезапускается: ход прерван и не сохранён — отправьте сообщение ещё раз.";

/** An error for a log line: message and stack, never the request that caused it. */
export function describe(e: unknown): { message: string; stack?: string; code?: string } {
  if (e instanceof AppError) return { message: e.message, code: e.code };
  if (e instanceof Error) return { message: e.message, stack: e.stack };
  return { message: String(e) };
}
