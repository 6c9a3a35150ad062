import { z } from "zod";

/** Intent codes double as branch codes (seed 003: intent ↔ branch is 1:1). */
export const branchCodes = [
  "new_booking",
  "price_question",
  "general_info",
  "medical_question",
  "reschedule",
  "escalate_human",
] as const;
export const BranchCode = z.enum(branchCodes);
export type BranchCode = z.infer<typeof BranchCode>;

export const escalationReasons = ["acute_pain", "surgery", "angry", "explicit_request", "routing_loop"] as const;
export const EscalationReason = z.enum(escalationReasons);
export type EscalationReason = z.infer<typeof EscalationReason>;

const code = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "a lower_snake_case code");

/** One named guard of a step: blocks leaving the step until `required_slots` are filled. */
export const GuardSpec = z.object({
  description: z.string().default(""),
  /** Absent → the guard is always active. */
  trigger_slot: code.optional(),
  trigger_value: z.unknown().optional(),
  required_slots: z.array(code).min(1),
});
export type GuardSpec = z.infer<typeof GuardSpec>;

export const StepSpec = z.object({
  code,
  title: z.string().default(""),
  /** The step's piece of the branch system prompt. */
  prompt: z.string(),
  /** The question this step asks; used by the hard "return to the step" instruction and as a fallback reply. */
  question: z.string().default(""),
  allowed_next: z.array(code),
  guards: z.record(code, GuardSpec).default({}),
});
export type StepSpec = z.infer<typeof StepSpec>;

/** The step graph of a stepped branch; the first step is the initial one unless `initial` says otherwise. */
export const StepGraph = z
  .object({
    branch: code,
    version: z.number().int().positive().default(1),
    initial: code.optional(),
    steps: z.array(StepSpec).min(1),
  })
  .superRefine((g, ctx) => {
    const codes = new Set(g.steps.map((s) => s.code));
    if (codes.size !== g.steps.length) ctx.addIssue({ code: "custom", message: "step codes must be unique" });
    if (g.initial && !codes.has(g.initial))
      ctx.addIssue({ code: "custom", message: `initial step ${g.initial} is not a step` });
    for (const s of g.steps)
      for (const n of s.allowed_next)
        if (!codes.has(n))
          ctx.addIssue({ code: "custom", message: `step ${s.code}: allowed_next names unknown step ${n}` });
  });
export type StepGraph = z.infer<typeof StepGraph>;

export const BranchConfig = z.object({
  code: BranchCode,
  version: z.number().int().positive().default(1),
  title: z.string(),
  system_prompt: z.string(),
  rules: z.array(z.string()).default([]),
  exit_conditions: z.array(z.string()).default([]),
  /** Informational branches answer from the knowledge base; the booking branch only for side questions. */
  knowledge: z.enum(["always", "side_questions", "never"]).default("never"),
});
export type BranchConfig = z.infer<typeof BranchConfig>;

/** The router's system branch (seed 003: `_router`, managed in Настройки with versions like any branch). */
export const ROUTER_CODE = "_router";
export const RouterConfig = z.object({
  code: z.literal(ROUTER_CODE).default(ROUTER_CODE),
  version: z.number().int().positive().default(1),
  title: z.string().default("Маршрутизатор"),
  system_prompt: z.string().trim().min(1, "системный промпт маршрутизатора не может быть пустым"),
});
export type RouterConfig = z.infer<typeof RouterConfig>;

export interface Registry {
  branches: Record<BranchCode, BranchConfig>;
  /** The active `_router` version; absent → the seed's prompt (clinic/seed-router.ts). */
  router?: RouterConfig;
  /** Only stepped branches appear here. */
  stepGraphs: Partial<Record<BranchCode, StepGraph>>;
}

export type Slots = Record<string, unknown>;

export const SuspendedIntent = z.object({
  intent: BranchCode,
  step: z.string().nullable(),
  slots: z.record(z.string(), z.unknown()),
});
export type SuspendedIntent = z.infer<typeof SuspendedIntent>;

/** The thread state of CONTRACT §5.3 — what `final.state` and GET /threads/{id} show. */
export const ClinicState = z.object({
  activeBranch: BranchCode.nullable(),
  routerDecision: BranchCode.nullable(),
  step: z.string().nullable(),
  slots: z.record(z.string(), z.unknown()),
  handoffCount: z.number().int().min(0),
  softInsertionCount: z.number().int().min(0),
  suspended: SuspendedIntent.nullable(),
  escalationReason: EscalationReason.nullable(),
});
export type ClinicState = z.infer<typeof ClinicState>;

export const initialClinicState = (): ClinicState => ({
  activeBranch: null,
  routerDecision: null,
  step: null,
  slots: {},
  handoffCount: 0,
  softInsertionCount: 0,
  suspended: null,
  escalationReason: null,
});

/** CONTRACT §5.3 event names; `guard_blocked:<guard>` carries the guard's name. */
export type TurnEvent =
  | "sticky"
  | "soft_insertion"
  | "handoff"
  | "resumed"
  | `guard_blocked:${string}`
  | "transition_rejected"
  | "loop_guard"
  | "escalated"
  | "model_unavailable"
  /** An acute red flag in the patient's words (clinic/red-flags.ts): the emergency reply, no model call. */
  | "red_flag"
  /** The branch's STATE_JSON or signal could not be read (step and slots kept; the debug notes say why). */
  | "tail_malformed"
  /** A well-formed INTENT_CHANGE that did not move the dialogue (no exit conditions, or the thread is with a human). */
  | "signal_ignored"
  /** An operator holds the thread (the dialogue machine's `human` state): no model is asked, the holding reply. */
  | "held_by_operator";

/** The cap of seed 003: more than this many switches in one thread trips the loop guard. */
export const HANDOFF_CAP = 3;
/** Three soft insertions in a row → the hard "return to the step's question" instruction. */
export const SOFT_INSERTION_LIMIT = 3;
