import { z } from "zod";

/**
 * One scripted model reply as a dataset writes it. Plain strings are the message content; the
 * object forms keep datasets readable (a branch reply with its service tail, a planner's JSON, a
 * reranker choice by document identity) and are rendered to the exact text a model would send.
 */
export const ROLES = ["router", "branch", "planner", "reranker", "classifier", "answer"] as const;
export type Role = (typeof ROLES)[number];

export const StepSchema = z.union([
  z.string(),
  z
    .object({
      /** Literal message content. */
      content: z.string().optional(),
      /** Structured roles: serialized as the content. */
      json: z.unknown().optional(),
      /** Branch: patient-visible text, then the service tail. */
      text: z.string().optional(),
      state: z.record(z.string(), z.unknown()).optional(),
      intentChange: z.string().optional(),
      /** Reranker: the candidate whose document has this identity (`{"choice": "cN"}`). */
      choose: z.string().optional(),
      /** An HTTP error instead of a reply (a fault: served in live runs too). */
      status: z.number().int().optional(),
      /** Drop the connection without answering (a fault). */
      hangUp: z.boolean().optional(),
      /** Stream only this many characters of the reply, then drop the connection (a fault). */
      cutAfter: z.number().int().min(1).optional(),
      delayMs: z.number().int().min(0).optional(),
      /** Serve this scripted reply even in a live run (a deliberate model mistake under test). */
      inject: z.boolean().optional(),
    })
    .strict(),
]);
export type Step = z.infer<typeof StepSchema>;

export const ScriptSchema = z.partialRecord(z.enum(ROLES), z.array(StepSchema));
export type Script = z.infer<typeof ScriptSchema>;

/** Faults and injected replies replace the live model; everything else is forwarded in a live run. */
export function isInjected(s: Step): boolean {
  return (
    typeof s !== "string" &&
    (s.status !== undefined || s.hangUp === true || s.cutAfter !== undefined || s.inject === true)
  );
}

export interface CandidateView {
  candidateId: string;
  displayName?: string;
  documentType?: string;
  folder?: string;
}

export interface DocView {
  identity: string;
  displayName: string;
  documentType: string;
  folderName?: string;
}

/** The text of a step; `choose` needs the candidates the reranker was shown and the workspace. */
export function renderStep(
  s: Step,
  ctx: { candidates?: CandidateView[]; documents?: DocView[] } = {},
): { content: string; note?: string } {
  if (typeof s === "string") return { content: s };
  if (s.content !== undefined) return { content: s.content };
  if (s.json !== undefined) return { content: JSON.stringify(s.json) };
  if (s.choose !== undefined) {
    const doc = ctx.documents?.find((d) => d.identity === s.choose);
    const match = (ctx.candidates ?? []).filter(
      (c) =>
        doc &&
        c.displayName === doc.displayName &&
        c.documentType === doc.documentType &&
        (c.folder === undefined || c.folder === doc.folderName),
    );
    if (match.length === 1) return { content: JSON.stringify({ choice: match[0]!.candidateId }) };
    return {
      content: JSON.stringify({ choice: "none" }),
      note: `choose ${s.choose}: ${match.length} matching candidates`,
    };
  }
  if (s.text !== undefined || s.state !== undefined || s.intentChange !== undefined) {
    const parts: string[] = [];
    if (s.text) parts.push(s.text);
    if (s.state) parts.push(`STATE_JSON: ${JSON.stringify(s.state)}`);
    if (s.intentChange) parts.push(`[INTENT_CHANGE: ${s.intentChange}]`);
    return { content: parts.join("\n") };
  }
  return { content: "" };
}
