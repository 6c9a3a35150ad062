import type { AnswerChoice } from "./answer-choice";
import type {
  ConversationState,
  CoverageReport,
  EvidenceBundle,
  ExecutionPlan,
  FinalAnswerPackage,
  QueryFrame,
  ToolRun,
} from "./artifacts";
import type { AnswerValidation } from "./claim-check";
import type { ClaimsMenu } from "./claims-menu";
import type { TurnScope } from "./frame-resolve";
import type { CriticOutput, InterpreterOutput } from "./model-outputs";
import type { OutcomeClass, ReasonCode } from "./reason-codes";

/**
 * What the evidence conversation machine (conversation.machine.ts) holds, takes and emits: kept
 * apart from the machine files so the effects and the answer package read them without the
 * statechart.
 */

export interface TurnWork {
  requestId: string;
  text: string;
  turn: number;
  offline: boolean;
  frame: QueryFrame | null;
  scope: TurnScope | null;
  plan: ExecutionPlan | null;
  toolRuns: ToolRun[];
  bundle: EvidenceBundle;
  coverage: CoverageReport | null;
  clarifying: string | null;
  draft: FinalAnswerPackage | null;
  /** This run's claims: everything an answer may state (claims-menu.ts). */
  menu: ClaimsMenu | null;
  answer: FinalAnswerPackage | null;
  validation: AnswerValidation | null;
  /** The model's answer when it was not shown (rejected, or broken off): kept with the run, never shown. */
  rejected: { text: string; released: string; issues: string[] } | null;
  /** Why the connected interpreter model was not used (its failure), when it was not. */
  modelIssue: ModelIssue | null;
}

export type ModelIssue = "invalid_output" | "model_unavailable";

/** The model steps of a turn, as `model.failed` names them. */
export type ModelStep = "interpreter" | "planner" | "critic" | "answer";

/** The client was shown model text that is not the answer: it must drop it and show `text`. */
export interface AnswerReplacement {
  text: string;
  reason: "validation_failed" | "model_failed";
  issues: string[];
}

/** What stays in the snapshot after a turn: control state and a compact summary, not the evidence. */
export interface LastTurn {
  requestId: string;
  turn: number;
  outcome: OutcomeClass;
  reasonCodes: ReasonCode[];
  answer: FinalAnswerPackage;
  coverage: CoverageReport;
  validation: AnswerValidation | null;
  replacement: AnswerReplacement | null;
}

export interface EvidenceContext {
  state: ConversationState;
  turn: TurnWork | null;
  last: LastTurn | null;
}

export type EvidenceEvent =
  | { type: "user.message"; text: string; requestId: string; offline: boolean }
  | {
      type: "interpreted";
      output: InterpreterOutput | null;
      via: "llm" | "deterministic";
      modelIssue?: "invalid_output" | "model_unavailable" | null;
    }
  | { type: "planned"; plan: ExecutionPlan }
  | { type: "executed"; toolRuns: ToolRun[]; truncated: EvidenceBundle["truncated"] }
  | {
      type: "criticized";
      critique: CriticOutput | null;
      status: CoverageReport["critic"]["model"];
      note?: string | null;
    }
  /**
   * The answer step finished. `choice`: the model's structured choice over the claims menu (null:
   * no model — the engine's own choice, the draft, went out); `released`: what reached the client
   * as tokens (the rendered choice: nothing is streamed before it is validated).
   */
  | {
      type: "answered";
      choice?: AnswerChoice | null;
      released?: string;
      /** Legacy (logged before the claims menu): the model's prose in the slot contract, replayed through its check. */
      text?: string | null;
      gateIssues?: string[];
    }
  /**
   * A model step gave nothing usable, its repair retry included. `codes`: each failed attempt's
   * error code (`invalid_output`, `unavailable`, `timeout`, … ; `rule_violation` for an answer
   * that broke the step's rules); `issues`: why, in words; `released`: what of a broken answer
   * stream already reached the client.
   */
  | { type: "model.failed"; role: ModelStep; codes: string[]; issues: string[]; released?: string }
  /** The answer composed from evidence went out as tokens (nothing of the model's had). */
  | { type: "draft.shown" };

export type EvidenceEffect =
  | { type: "effect.interpret"; text: string; state: ConversationState }
  | { type: "effect.interpretByRules"; text: string; state: ConversationState; modelIssue: ModelIssue | null }
  | { type: "effect.plan"; frame: QueryFrame; scope: TurnScope }
  | { type: "effect.planByRules"; scope: TurnScope }
  | { type: "effect.execute"; plan: ExecutionPlan }
  | {
      type: "effect.critic";
      frame: QueryFrame | null;
      scope: TurnScope;
      bundle: EvidenceBundle;
      coverage: CoverageReport;
    }
  | {
      type: "effect.answer";
      frame: QueryFrame | null;
      scope: TurnScope | null;
      bundle: EvidenceBundle;
      coverage: CoverageReport;
      draft: FinalAnswerPackage;
      menu: ClaimsMenu;
      text: string;
      offline: boolean;
    }
  | { type: "effect.showDraft"; text: string }
  | { type: "effect.record"; work: TurnWork; state: ConversationState };

export interface AnswerOutcome {
  answer: FinalAnswerPackage;
  validation: AnswerValidation | null;
  replacement: AnswerReplacement | null;
  rejected: TurnWork["rejected"];
}
