import {
  INVALID_SPAN_CONTEXT,
  ProxyTracerProvider,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
} from "@opentelemetry/api";

/**
 * OpenTelemetry spans through the API only: without a registered SDK every span is a no-op
 * (the API's default tracer), so tracing is off unless the deployment registers one
 * (e.g. `node --import @opentelemetry/auto-instrumentations-node/register`).
 */
const NAME = "dialogue-statecharts";

/** What every span is when nothing records them: no state, every method a no-op. */
const NOT_RECORDED: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Whether an SDK registered a tracer provider. Asked per span (a test or a late `--import` may
 * register one after this module loaded); the global provider is the API's proxy, which hands
 * out a tracer only once it has a delegate.
 */
function recording(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegateTracer(NAME) !== undefined;
}

/**
 * Runs `fn` inside a span named `name`; a throw marks the span as an error and is rethrown.
 * With no SDK, `fn` gets the shared non-recording span directly: the API's no-op path would
 * still allocate a span, a context and two closures per call, on every turn and model call.
 */
export async function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  if (!recording()) return fn(NOT_RECORDED);
  // The current provider's tracer, not one taken at load: `trace.disable()` replaces the proxy.
  return trace.getTracer(NAME).startActiveSpan(name, { attributes }, async (span) => {
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
