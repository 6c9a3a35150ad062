import type { Span } from "@opentelemetry/api";
import { inSpan } from "../../driver/tracing";
import type { Llm, LlmResult, Role } from "../../llm/types";
import { logContextOf, logger, withIds } from "./logger";
import { metrics } from "./metrics";
import { gatherModelCall, type ModelCallSummary } from "./turn-line";

/**
 * The model client with a log entry, metrics and a span per call: role, model, latency,
 * tokens, attempts (a retry is attempts 2) and outcome. Inside a streamed turn the entry rides
 * on the turn's line (turn-line.ts), elsewhere it is a line of its own. A failed call — a provider outage
 * that the patient sees as «модель временно недоступна» — logs at `warn` with its error code
 * and the provider's message (already stripped of credentials by the client).
 */
export function observeLlm(llm: Llm): Llm {
  const observe = async <T>(
    role: Role,
    kind: string,
    signal: AbortSignal | undefined,
    call: () => Promise<LlmResult<T>>,
  ): Promise<LlmResult<T>> =>
    inSpan(
      "model call",
      { "llm.role": role, "llm.model": llm.modelFor(role), "llm.kind": kind },
      async (span: Span) => {
        const r = await call();
        const m = r.meta;
        const outcome = r.ok ? "ok" : r.error.code;
        metrics.modelCalls.inc({ role, model: m.model, outcome });
        metrics.modelSeconds.observe({ role, model: m.model }, m.durationMs / 1000);
        if (m.attempts > 1) metrics.modelRetries.inc({ role, model: m.model });
        if (m.usage) {
          metrics.modelTokens.inc({ role, model: m.model, kind: "prompt" }, m.usage.promptTokens);
          metrics.modelTokens.inc({ role, model: m.model, kind: "completion" }, m.usage.completionTokens);
        }
        if (span.isRecording())
          span.setAttributes({
            "llm.attempts": m.attempts,
            "llm.outcome": outcome,
            ...(m.usage
              ? { "llm.prompt_tokens": m.usage.promptTokens, "llm.completion_tokens": m.usage.completionTokens }
              : {}),
          });
        const summary: ModelCallSummary = {
          role,
          model: m.model,
          kind,
          latencyMs: Math.round(m.durationMs),
          attempts: m.attempts,
          retried: m.attempts > 1,
          promptTokens: m.usage?.promptTokens ?? null,
          completionTokens: m.usage?.completionTokens ?? null,
          promptChars: m.promptChars,
          offline: m.offline,
          outcome,
        };
        // The run's ids: the caller hands the run's signal, bound to them when the run began (http/turn-begin.ts).
        const ctx = logContextOf(signal);
        if (r.ok || r.error.code === "cancelled") {
          if (!gatherModelCall(ctx, summary))
            logger.info(withIds(ctx, { event: "model_call", ...summary }), "model call");
        } else {
          // An outage is logged when it happens, whatever the turn then does.
          metrics.errors.inc({ where: "model", code: r.error.code });
          logger.warn(withIds(ctx, { event: "model_call", ...summary, error: r.error.message }), "model call failed");
        }
        return r;
      },
    );
  return {
    get offline() {
      return llm.offline;
    },
    modelFor: (role) => llm.modelFor(role),
    complete: (role, messages, opts) =>
      observe(role, "complete", opts?.signal, () => llm.complete(role, messages, opts)),
    stream: (role, messages, opts) => observe(role, "stream", opts.signal, () => llm.stream(role, messages, opts)),
    structured: (role, messages, schema, name, opts) =>
      observe(role, "structured", opts?.signal, () => llm.structured(role, messages, schema, name, opts)),
  };
}
