import type { LogContext } from "./logger";

/**
 * A streamed turn logs one line at its end (a "canonical" line): the request that started it
 * (method, route, HTTP status, time to the headers, role) and its model calls ride on the
 * `turn` line instead of three more lines. A line handed to stdout is a write, a wake-up of
 * whatever reads the log (a pipe: a log shipper, a container runtime) and the reader's parse;
 * four per turn cost the server about 0.4 ms of CPU per turn and a sixth of a sequential turn's
 * latency on two cores (doc/bench.md, session 11). What only an incident needs keeps its own
 * line at once: a failed model call (`warn`), a failed turn, a request without a turn.
 */

/** One model call as the turn line lists it (observed-llm.ts builds it). */
export interface ModelCallSummary {
  role: string;
  model: string;
  kind: string;
  latencyMs: number;
  attempts: number;
  retried: boolean;
  promptTokens: number | null;
  completionTokens: number | null;
  promptChars?: number;
  offline?: boolean;
  outcome: string;
}

/** What the request middleware would have logged on its own line (http/observability/routes.ts). */
export interface RequestSummary {
  method: string;
  route: string;
  path: string;
  status: number;
  /** Until the handler returned: for a stream, until its headers went out. */
  latencyMs: number;
  role?: string;
}

interface Pending {
  request?: RequestSummary;
  modelCalls: ModelCallSummary[];
}

// Keyed by the request's log context (the object every line of the request spreads its ids from),
// so the ids stay the only fields a line takes from the context.
const open = new WeakMap<LogContext, Pending>();

/** A turn begins on this context: its request and model calls wait for the turn line. */
export function openTurnLine(ctx: LogContext): void {
  if (!open.has(ctx)) open.set(ctx, { modelCalls: [] });
}

/** True when the turn line of `ctx` will carry the call (else the caller logs it on its own line). */
export function gatherModelCall(ctx: LogContext | undefined, call: ModelCallSummary): boolean {
  const p = ctx && open.get(ctx);
  if (!p) return false;
  p.modelCalls.push(call);
  return true;
}

/** True when the turn line of `ctx` will carry the request (a turn still streaming). */
export function gatherRequest(ctx: LogContext | undefined, request: RequestSummary): boolean {
  const p = ctx && open.get(ctx);
  if (!p) return false;
  p.request = request;
  return true;
}

/**
 * The turn's gathered fields, once: the context takes no more (a request line that comes after
 * this is written on its own, as is a model call made after the turn).
 */
export function closeTurnLine(ctx: LogContext): { request?: RequestSummary; modelCalls: ModelCallSummary[] } {
  const p = open.get(ctx);
  open.delete(ctx);
  return p ? { ...(p.request ? { request: p.request } : {}), modelCalls: p.modelCalls } : { modelCalls: [] };
}
