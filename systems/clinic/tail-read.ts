import { z } from "zod";
import { BranchCode, EscalationReason } from "./types";

/**
 * What a branch's service tail says (seed 003, CONTRACT §5.2), read from the text service-tail.ts
 * cut out: the STATE_JSON proposal and the intent-change signal, or why they are malformed.
 */

export const StateJson = z.object({
  state_after: z.string().min(1).optional(),
  slots_updated: z.record(z.string(), z.unknown()).default({}),
  soft_insertion: z.boolean().optional(),
  /** Read only from escalate_human: the reason when the router (not a signal) sent the patient there. */
  escalation_reason: EscalationReason.optional(),
});
export type StateJson = z.infer<typeof StateJson>;

export type TailState =
  { kind: "none" } | { kind: "ok"; value: StateJson } | { kind: "malformed"; raw: string; error: string };

export type IntentSignal =
  | { kind: "none" }
  | { kind: "ok"; intent: BranchCode; reason: EscalationReason | null; rawReason: string | null }
  | { kind: "malformed"; raw: string };

export interface ParsedBranchOutput {
  /** What the patient may see. */
  visible: string;
  state: TailState;
  intentChange: IntentSignal;
}

/** Service text kept for the debug output is cut to this length (a runaway tail must not grow memory). */
export const RAW_CAP = 2000;

/** Reads a signal's body ("code|reason", "code:reason", "intent: CODE, reason: angry"). */
export function signalFromBody(body: string): IntentSignal {
  const tokens = body
    .split(/[\s|:,;=/]+/)
    .map((t) => t.replace(/^["'`]+|["'`.!]+$/g, "").toLowerCase())
    .filter(Boolean);
  const at = tokens.findIndex((t) => BranchCode.safeParse(t).success);
  if (at < 0) return { kind: "malformed", raw: body.trim().slice(0, RAW_CAP) };
  const rest = tokens.slice(at + 1).filter((t) => t !== "reason");
  const rawReason = rest[0] ?? null;
  const reason = rest.map((t) => EscalationReason.safeParse(t)).find((r) => r.success);
  return { kind: "ok", intent: BranchCode.parse(tokens[at]), reason: reason?.success ? reason.data : null, rawReason };
}

export function signalFromJson(raw: string): IntentSignal {
  try {
    const v = JSON.parse(raw) as Record<string, unknown>;
    const ic = v.intent_change;
    if (typeof ic === "string") return signalFromBody(`${ic}|${typeof v.reason === "string" ? v.reason : ""}`);
    if (ic && typeof ic === "object") {
      const o = ic as Record<string, unknown>;
      const code = o.intent ?? o.code ?? o.to ?? o.branch;
      const reason = o.reason ?? v.reason;
      if (typeof code === "string") return signalFromBody(`${code}|${typeof reason === "string" ? reason : ""}`);
    }
  } catch {
    // fall through: malformed
  }
  return { kind: "malformed", raw: raw.slice(0, RAW_CAP) };
}

export function stateFromJson(raw: string): TailState {
  try {
    const r = StateJson.safeParse(JSON.parse(raw));
    if (r.success) return { kind: "ok", value: r.data };
    return { kind: "malformed", raw: raw.slice(0, RAW_CAP), error: r.error.issues.map((i) => i.message).join("; ") };
  } catch (e) {
    return { kind: "malformed", raw: raw.slice(0, RAW_CAP), error: (e as Error).message };
  }
}
