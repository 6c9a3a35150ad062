import { SpanStatusCode, trace, type Attributes, type Span } from "@opentelemetry/api";

/**
 * OpenTelemetry spans through the API only: without a registered SDK every span is a no-op
 * (the API's default tracer), so tracing is off unless the deployment registers one
 * (e.g. `node --import @opentelemetry/auto-instrumentations-node/register`).
 */
export const tracer = trace.getTracer("dialogue-statecharts");

/** Runs `fn` inside a span named `name`; a throw marks the span as an error and is rethrown. */
export async function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (e) {
      span.recordException(e as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error)?.message });
      throw e;
    } finally {
      span.end();
    }
  });
}
